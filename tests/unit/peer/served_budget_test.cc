// The responder's served-bulk budget on a FakeClock: per-rail time, per-host bytes, the sliding
// hour, the retry hint and settling a probe's bytes.
#include "rail/peer/served_budget.h"

#include <gtest/gtest.h>

#include "support/fake_clock.h"

namespace rail::peer {
namespace {

using namespace std::chrono_literals;
using test::FakeClock;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

ServedProbe Probe(std::vector<std::string> rails, base::Duration declared,
                  std::uint64_t bytes = kGiB) {
  return ServedProbe{std::move(rails), declared, bytes};
}

TEST(ServedBudget, RefusesTheProbeThatWouldPassTheRailsTimeFractionWithTheWaitUntilItFits) {
  FakeClock clock;
  ServedBudget budget(clock, /*fraction=*/0.01, /*bytes=*/1000 * kGiB);  // 36 s per rail-hour
  ASSERT_TRUE(budget.TryAdmit(Probe({"rail0"}, 10s)).allowed);
  clock.Advance(10min);
  ASSERT_TRUE(budget.TryAdmit(Probe({"rail0"}, 10s)).allowed);
  clock.Advance(10min);
  ASSERT_TRUE(budget.TryAdmit(Probe({"rail0"}, 10s)).allowed);
  EXPECT_EQ(budget.ServedTime("rail0"), 30s);

  const BudgetDecision refused = budget.TryAdmit(Probe({"rail0"}, 10s));
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after, 40min);  // when the first probe leaves the hour
  EXPECT_NE(refused.error.find("rail rail0 has served 30 s"), std::string::npos) << refused.error;
  EXPECT_NE(refused.error.find("1%"), std::string::npos) << refused.error;
  // A probe that still fits is admitted, and the refusal charged nothing.
  EXPECT_TRUE(budget.TryAdmit(Probe({"rail0"}, 6s)).allowed);
  EXPECT_EQ(budget.ServedTime("rail0"), 36s);
}

TEST(ServedBudget, EachRailHasItsOwnTimeAndAMultiRailProbeChargesEveryRail) {
  FakeClock clock;
  ServedBudget budget(clock, 0.01, 1000 * kGiB);
  ASSERT_TRUE(budget.TryAdmit(Probe({"rail0"}, 30s)).allowed);
  EXPECT_TRUE(budget.TryAdmit(Probe({"rail1"}, 30s)).allowed);
  const BudgetDecision both = budget.TryAdmit(Probe({"rail2", "rail0"}, 10s));
  EXPECT_FALSE(both.allowed);
  EXPECT_NE(both.error.find("rail0"), std::string::npos);
  EXPECT_TRUE(budget.TryAdmit(Probe({"rail2", "rail3"}, 10s)).allowed);
  EXPECT_EQ(budget.ServedTime("rail2"), 10s);
  EXPECT_EQ(budget.ServedTime("rail3"), 10s);
}

TEST(ServedBudget, BytesAreTheHostsAcrossRails) {
  FakeClock clock;
  ServedBudget budget(clock, 1.0, 100 * kGiB);
  ASSERT_TRUE(budget.TryAdmit(Probe({"rail0"}, 1s, 60 * kGiB)).allowed);
  clock.Advance(5min);
  const BudgetDecision refused = budget.TryAdmit(Probe({"rail1"}, 1s, 60 * kGiB));
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after, 55min);
  EXPECT_NE(refused.error.find("bytes"), std::string::npos) << refused.error;
  EXPECT_TRUE(budget.TryAdmit(Probe({"rail1"}, 1s, 40 * kGiB)).allowed);
  EXPECT_EQ(budget.ServedBytes(), 100 * kGiB);
}

TEST(ServedBudget, TheHintWaitsForAsManyProbesAsMustAgeOut) {
  FakeClock clock;
  ServedBudget budget(clock, 0.01, 1000 * kGiB);  // 36 s
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(budget.TryAdmit(Probe({"rail0"}, 12s)).allowed) << i;
    clock.Advance(1min);
  }
  // 36 s served; 24 s more fits only once two of the three 12 s probes have aged out.
  const BudgetDecision refused = budget.TryAdmit(Probe({"rail0"}, 24s));
  ASSERT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after, 1h + 1min - 3min);
  clock.Advance(refused.retry_after - 1s);
  EXPECT_FALSE(budget.TryAdmit(Probe({"rail0"}, 24s)).allowed);
  clock.Advance(1s);
  EXPECT_TRUE(budget.TryAdmit(Probe({"rail0"}, 24s)).allowed);
}

TEST(ServedBudget, TheHourSlides) {
  FakeClock clock;
  ServedBudget budget(clock, 0.01, 1000 * kGiB);
  ASSERT_TRUE(budget.TryAdmit(Probe({"rail0"}, 36s, 5 * kGiB)).allowed);
  EXPECT_FALSE(budget.TryAdmit(Probe({"rail0"}, 1s)).allowed);
  clock.Advance(1h - 1ms);
  EXPECT_EQ(budget.ServedTime("rail0"), 36s);
  clock.Advance(1ms);
  EXPECT_EQ(budget.ServedTime("rail0"), 0s);
  EXPECT_EQ(budget.ServedBytes(), 0u);
  EXPECT_TRUE(budget.TryAdmit(Probe({"rail0"}, 36s)).allowed);
}

TEST(ServedBudget, SettleLowersTheBytesToWhatTheProbeMovedAndNeverRaisesThem) {
  FakeClock clock;
  ServedBudget budget(clock, 1.0, 100 * kGiB);
  const BudgetDecision first = budget.TryAdmit(Probe({"rail0"}, 5s, 64 * kGiB));
  ASSERT_TRUE(first.allowed);
  EXPECT_FALSE(budget.TryAdmit(Probe({"rail0"}, 5s, 64 * kGiB)).allowed);
  budget.Settle(first.ticket, 20 * kGiB);
  EXPECT_EQ(budget.ServedBytes(), 20 * kGiB);
  budget.Settle(first.ticket, 90 * kGiB);  // a claim above the declared cap changes nothing
  EXPECT_EQ(budget.ServedBytes(), 20 * kGiB);
  const BudgetDecision second = budget.TryAdmit(Probe({"rail0"}, 5s, 64 * kGiB));
  EXPECT_TRUE(second.allowed);
  EXPECT_NE(first.ticket, second.ticket);
  clock.Advance(2h);
  budget.Settle(second.ticket, 1);  // aged out: ignored
  EXPECT_EQ(budget.ServedBytes(), 0u);
}

TEST(ServedBudget, TracksAtMostMaxEntriesProbes) {
  FakeClock clock;
  ServedBudget budget(clock, 1.0, 1000 * kGiB, /*max_entries=*/2);
  ASSERT_TRUE(budget.TryAdmit(Probe({"rail0"}, 1s, 1)).allowed);
  clock.Advance(1min);
  ASSERT_TRUE(budget.TryAdmit(Probe({"rail1"}, 1s, 1)).allowed);
  const BudgetDecision refused = budget.TryAdmit(Probe({"rail2"}, 1s, 1));
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after, 59min);
}

TEST(ServedBudget, ASetupIsChargedItsDurationOnEachRailAndItsMaxBytes) {
  ProbeSetup setup;
  setup.rail = "rail0,rail1";
  setup.duration_seconds = 2.5;
  setup.max_bytes = 64 * kGiB;
  const ServedProbe probe = ServedProbeOf(setup);
  EXPECT_EQ(probe.rails, (std::vector<std::string>{"rail0", "rail1"}));
  EXPECT_EQ(probe.declared, 2500ms);
  EXPECT_EQ(probe.bytes, 64 * kGiB);
}

TEST(ServedBudget, BytesMovedComesFromEitherSideAndIgnoresWhatIsNotACount) {
  const nlohmann::json none = nlohmann::json::object();
  EXPECT_EQ(BytesMoved(none, none), std::nullopt);
  EXPECT_EQ(BytesMoved({{"bytes", 500}}, none), 500u);
  EXPECT_EQ(BytesMoved(none, {{"bytes_received", 700}}), 700u);
  EXPECT_EQ(BytesMoved({{"bytes", 500}}, {{"bytes_received", 700}}), 700u);
  EXPECT_EQ(BytesMoved({{"bytes", -5}}, {{"bytes_received", "many"}}), std::nullopt);
  EXPECT_EQ(BytesMoved(nlohmann::json::array(), nullptr), std::nullopt);
}

}  // namespace
}  // namespace rail::peer
