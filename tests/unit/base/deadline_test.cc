// base::Deadline: every wait of the agent ends at one, on the clock it was set by.
#include <gtest/gtest.h>

#include "rail/base/clock.h"
#include "support/fake_clock.h"

namespace rail::base {
namespace {

using namespace std::chrono_literals;

TEST(DeadlineTest, RemainingFollowsTheClockItWasSetByAndNeverGoesNegative) {
  test::FakeClock clock;
  const Deadline deadline = Deadline::After(clock, 10s);
  EXPECT_EQ(deadline.Remaining(), Duration(10s));
  EXPECT_FALSE(deadline.Passed());
  clock.Advance(4s);
  EXPECT_EQ(deadline.Remaining(), Duration(6s));
  clock.Advance(6s);
  EXPECT_TRUE(deadline.Passed());
  EXPECT_EQ(deadline.Remaining(), Duration::zero());
  clock.Advance(1h);
  EXPECT_EQ(deadline.Remaining(), Duration::zero());
}

TEST(DeadlineTest, ASteppingClockPassesEveryDeadlineAtTheNextReading) {
  const test::SteppingClock clock(1h);
  const Deadline deadline = Deadline::After(clock, 1h);
  EXPECT_TRUE(deadline.Passed());
  EXPECT_EQ(deadline.Remaining(), Duration::zero());
}

TEST(DeadlineTest, AnAbandonFlagPassesItAtOnceAndCapsEveryWait) {
  test::FakeClock clock;
  std::atomic<bool> stopping{false};
  const Deadline deadline = Deadline::After(clock, 1h).OrWhenSet(stopping);
  EXPECT_FALSE(deadline.Passed());
  EXPECT_EQ(deadline.Remaining(), Duration(1h));
  EXPECT_LE(deadline.BlockFor(), Duration(Deadline::kAbandonSlice));
  EXPECT_EQ(Deadline::After(SystemClock(), 1h).OrWhenSet(stopping).BlockFor(),
            Duration(Deadline::kAbandonSlice));  // the real clock's hour, looked at in slices
  stopping = true;
  EXPECT_TRUE(deadline.Passed());
  EXPECT_TRUE(deadline.Abandoned());
  EXPECT_EQ(deadline.Remaining(), Duration::zero());
}

}  // namespace
}  // namespace rail::base
