#include "rail/collectors/config_reload.h"

#include <gtest/gtest.h>

#include "support/fake_clock.h"

namespace rail::collectors {
namespace {

TEST(ConfigReloadRecordTest, TheStartIsASuccessAndOnlySuccessesMoveTheStamp) {
  test::FakeClock clock;
  ConfigReloadRecord record(clock);
  const auto started = record.Last();
  EXPECT_TRUE(started.last_successful);
  EXPECT_EQ(started.last_success, clock.WallNow());

  clock.Advance(std::chrono::minutes(1));
  record.Record(false);
  EXPECT_FALSE(record.Last().last_successful);
  EXPECT_EQ(record.Last().last_success, started.last_success);

  clock.Advance(std::chrono::minutes(1));
  record.Record(true);
  EXPECT_TRUE(record.Last().last_successful);
  EXPECT_EQ(record.Last().last_success, clock.WallNow());
}

}  // namespace
}  // namespace rail::collectors
