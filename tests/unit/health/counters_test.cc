// counter_saturated on the quirks tree, whose qib ports have pegged classic counters.
#include <gmock/gmock.h>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(CounterSaturatedTest, PeggedCountersFailAndAreNamed) {
  const Host host("quirks");
  const auto verdict = Find(host.Evaluate(), "counter_saturated", "qib0:1");
  ASSERT_TRUE(verdict);
  EXPECT_FALSE(verdict->ok);
  EXPECT_THAT(verdict->reason, HasSubstr("qib0 port 1 counters pegged at their maximum"));
  EXPECT_THAT(verdict->reason, HasSubstr("port_xmit_data (32 bit)"));
  EXPECT_THAT(verdict->reason, HasSubstr("symbol_error (16 bit)"));
  EXPECT_THAT(verdict->reason, HasSubstr("link_downed (8 bit)"));
  EXPECT_THAT(verdict->reason, HasSubstr("local_link_integrity_errors (4 bit)"));
  // One below the maximum is a value, not a pegged counter.
  EXPECT_THAT(verdict->reason, Not(HasSubstr("port_rcv_data")));
  EXPECT_THAT(verdict->reason, Not(HasSubstr("port_rcv_errors")));
}

TEST(CounterSaturatedTest, ExtendedCopySupersedesANarrowPeggedCounter) {
  // qib1's counters/port_xmit_data is pegged, but counters_ext/port_xmit_data_64 counts on.
  const Host host("quirks");
  const auto verdict = Find(host.Evaluate(), "counter_saturated", "qib1:1");
  ASSERT_TRUE(verdict);
  EXPECT_THAT(verdict->reason, Not(HasSubstr("port_xmit_data")));
  EXPECT_THAT(verdict->reason, HasSubstr("symbol_error (16 bit)"));
}

TEST(CounterSaturatedTest, SixtyFourBitCountersPass) {
  const Host host("spark-dual-rail");
  const auto results = host.Evaluate();
  for (const auto& rail : host.rails) {
    const auto verdict = Find(results, "counter_saturated", rail.name);
    ASSERT_TRUE(verdict) << rail.name;
    EXPECT_TRUE(verdict->ok) << verdict->reason;
  }
}

// rxe has no PMA (no counters/, no counters_ext/): no verdict, rather than a pass that cites
// files that do not exist.
TEST(CounterSaturatedTest, PortsWithoutPmaCountersGetNoVerdict) {
  const Host host("rxe-dual-rail");
  const auto results = host.Evaluate();
  ASSERT_EQ(host.rails.size(), 2u);
  for (const auto& rail : host.rails) {
    EXPECT_FALSE(Find(results, "counter_saturated", rail.name)) << rail.name;
    EXPECT_TRUE(Find(results, "port_active", rail.name))
        << "other checks still judge " << rail.name;
  }
}

}  // namespace
}  // namespace rail::health::test
