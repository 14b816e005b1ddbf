// RunSoon: an extra run of a job (a capacity measured again), as soon as its rails allow, that
// keeps the regular run where it was.
#include <gtest/gtest.h>

#include "rail/schedule/scheduler.h"
#include "support/fake_clock.h"

namespace rail::schedule {
namespace {

using namespace std::chrono_literals;

ProbeJob BulkJob(std::string name) {
  ProbeJob job;
  job.name = std::move(name);
  job.kind = "multirail_capacity";
  job.peer = "b";
  job.rails = {"rail0", "rail1"};
  job.load = ProbeLoad::kBulk;
  job.interval = 120s;
  job.timeout = 5s;
  job.expected_bytes = 1000;
  return job;
}

std::vector<std::string> Started(Scheduler& scheduler) {
  std::vector<std::string> names;
  for (const StartOrder& order : scheduler.Poll().start) names.push_back(order.name);
  return names;
}

class RunSoonTest : public ::testing::Test {
 protected:
  std::unique_ptr<Scheduler> Make(std::vector<ProbeJob> jobs) {
    SchedulerOptions options;
    options.budget.max_bulk_time_fraction_per_rail = 0.5;
    std::string error;
    auto scheduler = Scheduler::Create(std::move(jobs), options, clock_, &error);
    EXPECT_TRUE(scheduler) << error;
    return scheduler;
  }
  test::FakeClock clock_;
};

TEST_F(RunSoonTest, AnExtraRunComesAtOnceAndTheRegularOneStays) {
  auto scheduler = Make({BulkJob("capacity"), BulkJob("striped")});
  const TimePoint origin = clock_.Now();
  EXPECT_EQ(Started(*scheduler), std::vector<std::string>{"capacity"});
  ASSERT_TRUE(scheduler->Finished("capacity", 1000));
  EXPECT_EQ(Started(*scheduler), std::vector<std::string>{"striped"});
  clock_.Advance(3s);
  ASSERT_TRUE(scheduler->Finished("striped", 1000));
  // The striped run's efficiency came out above range: the capacity runs again now, not in 117 s.
  ASSERT_TRUE(scheduler->RunSoon("capacity"));
  EXPECT_EQ(scheduler->NextWakeUp(), clock_.Now());
  EXPECT_EQ(Started(*scheduler), std::vector<std::string>{"capacity"});
  ASSERT_TRUE(scheduler->Finished("capacity", 1000));
  EXPECT_EQ(scheduler->NextWakeUp(), origin + 120s);
  EXPECT_FALSE(scheduler->RunSoon("no-such-job"));
}

TEST_F(RunSoonTest, TheExtraRunWaitsForTheRailsOfARunningBulkJob) {
  auto scheduler = Make({BulkJob("capacity"), BulkJob("striped")});
  EXPECT_EQ(Started(*scheduler), std::vector<std::string>{"capacity"});
  ASSERT_TRUE(scheduler->Finished("capacity", 1000));
  EXPECT_EQ(Started(*scheduler), std::vector<std::string>{"striped"});
  ASSERT_TRUE(scheduler->RunSoon("capacity"));
  EXPECT_TRUE(Started(*scheduler).empty()) << "the striped run still holds the rails";
  ASSERT_TRUE(scheduler->Finished("striped", 1000));
  EXPECT_EQ(Started(*scheduler), std::vector<std::string>{"capacity"});
}

}  // namespace
}  // namespace rail::schedule
