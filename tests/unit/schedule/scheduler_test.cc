#include "rail/schedule/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "support/fake_clock.h"

namespace rail::schedule {
namespace {

using namespace std::chrono_literals;

ProbeJob Job(std::string name, std::vector<std::string> rails, ProbeLoad load, Duration interval,
             Duration timeout, std::uint64_t bytes = 1000, double jitter = 0) {
  ProbeJob job;
  job.name = std::move(name);
  job.kind = load == ProbeLoad::kBulk ? "ucx_throughput" : "ucx_rtt";
  job.peer = "peer-b";
  job.rails = std::move(rails);
  job.load = load;
  job.interval = interval;
  job.timeout = timeout;
  job.expected_bytes = bytes;
  job.jitter_fraction = jitter;
  return job;
}

ProbeJob Bulk(std::string name, std::vector<std::string> rails) {
  return Job(std::move(name), std::move(rails), ProbeLoad::kBulk, 1000s, 10s);
}

ProbeJob Latency(std::string name, std::vector<std::string> rails) {
  return Job(std::move(name), std::move(rails), ProbeLoad::kLatency, 100s, 5s);
}

std::vector<std::string> Names(const PollResult& result) {
  std::vector<std::string> names;
  for (const StartOrder& order : result.start) names.push_back(order.name);
  return names;
}

class SchedulerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Scheduler> Make(std::vector<ProbeJob> jobs, SchedulerOptions options = {}) {
    std::string error;
    auto scheduler = Scheduler::Create(std::move(jobs), options, clock_, &error);
    EXPECT_TRUE(scheduler) << error;
    return scheduler;
  }

  // Runs one job alone for `runs` runs, each finishing at once, sleeping until each wake-up.
  std::vector<TimePoint> StartTimes(ProbeJob job, std::uint64_t seed, int runs) {
    SchedulerOptions options;
    options.seed = seed;
    auto scheduler = Make({std::move(job)}, options);
    std::vector<TimePoint> starts;
    while (static_cast<int>(starts.size()) < runs) {
      for (const StartOrder& order : scheduler->Poll().start) {
        starts.push_back(clock_.Now());
        scheduler->Finished(order.name, 0);
      }
      const std::optional<TimePoint> wake = scheduler->NextWakeUp();
      EXPECT_TRUE(wake);
      EXPECT_GT(*wake, clock_.Now());  // never a busy loop
      clock_.Set(*wake);
    }
    return starts;
  }

  test::FakeClock clock_;
};

TEST_F(SchedulerTest, IntervalWithJitterStaysWithinBoundsAndIsReproducible) {
  const ProbeJob job = Job("rtt", {"rail0"}, ProbeLoad::kLatency, 60s, 1s, 100, 0.1);
  const TimePoint origin = clock_.Now();
  const std::vector<TimePoint> starts = StartTimes(job, 42, 50);

  EXPECT_GE(starts.front(), origin);
  EXPECT_LE(starts.front(), origin + 6s);  // first run within jitter * interval of the start
  std::vector<Duration> gaps;
  for (std::size_t i = 1; i < starts.size(); ++i) gaps.push_back(starts[i] - starts[i - 1]);
  for (Duration gap : gaps) {
    EXPECT_GE(gap, 54s);
    EXPECT_LE(gap, 66s);
  }
  // Jitter really varies the intervals, over both halves of its range.
  EXPECT_LT(*std::min_element(gaps.begin(), gaps.end()), 58s);
  EXPECT_GT(*std::max_element(gaps.begin(), gaps.end()), 62s);

  clock_.Set(origin);
  EXPECT_EQ(StartTimes(job, 42, 50), starts);  // same seed, same times
  clock_.Set(origin);
  EXPECT_NE(StartTimes(job, 43, 50), starts);
}

TEST_F(SchedulerTest, WithoutJitterRunsExactlyEveryInterval) {
  const TimePoint origin = clock_.Now();
  const auto starts = StartTimes(Job("rtt", {"rail0"}, ProbeLoad::kLatency, 30s, 1s, 100, 0), 1, 4);
  EXPECT_EQ(starts, (std::vector<TimePoint>{origin, origin + 30s, origin + 60s, origin + 90s}));
}

TEST_F(SchedulerTest, AJobNeverOverlapsItselfAndMissedRunsAreNotCaughtUp) {
  auto scheduler = Make({Job("slow", {"rail0"}, ProbeLoad::kLatency, 10s, 60s)});
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"slow"});
  clock_.Advance(35s);  // three intervals pass while it runs
  EXPECT_TRUE(scheduler->Poll().start.empty());
  ASSERT_TRUE(scheduler->Finished("slow", 0));
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"slow"});  // once, not three times
  EXPECT_TRUE(scheduler->Poll().start.empty());
}

SchedulerOptions PerRail() {
  SchedulerOptions options;
  options.bulk_concurrency = base::BulkConcurrency::kPerRail;
  return options;
}

TEST_F(SchedulerTest, OneBulkTransferPerRail) {
  auto scheduler =
      Make({Bulk("tput-a", {"rail0"}), Bulk("tput-b", {"rail0"}), Bulk("tput-rail1", {"rail1"})},
           PerRail());
  EXPECT_EQ(Names(scheduler->Poll()), (std::vector<std::string>{"tput-a", "tput-rail1"}));
  clock_.Advance(3s);
  EXPECT_TRUE(scheduler->Poll().start.empty());  // tput-b waits for rail0

  ASSERT_TRUE(scheduler->Finished("tput-a", 1000));
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput-b"});
  EXPECT_TRUE(scheduler->IsRunning("tput-b"));
  EXPECT_FALSE(scheduler->IsRunning("tput-a"));
}

TEST_F(SchedulerTest, MultiRailBulkOccupiesAllItsRails) {
  auto scheduler = Make({Bulk("multirail", {"rail0", "rail1"}), Bulk("tput0", {"rail0"}),
                         Bulk("tput1", {"rail1"}), Latency("rtt1", {"rail1"})},
                        PerRail());
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"multirail"});
  ASSERT_TRUE(scheduler->Finished("multirail", 1000));
  EXPECT_EQ(Names(scheduler->Poll()), (std::vector<std::string>{"tput0", "tput1"}));
}

TEST_F(SchedulerTest, PerHostOneBulkRunAtATimeOnTheWholeHost) {
  // The default: bulk runs on different rails share the host's CPU and PCIe, so they take turns.
  auto scheduler = Make({Bulk("tput0", {"rail0"}), Bulk("tput1", {"rail1"}),
                         Latency("rtt0", {"rail0"}), Latency("rtt2", {"rail2"})});
  // tput1 waits for the host and reserves rail1; rtt0 waits for tput0's rail; rtt2 is free.
  EXPECT_EQ(Names(scheduler->Poll()), (std::vector<std::string>{"tput0", "rtt2"}));
  clock_.Advance(2s);
  EXPECT_TRUE(scheduler->Poll().start.empty());
  ASSERT_TRUE(scheduler->Finished("tput0", 1000));
  EXPECT_EQ(Names(scheduler->Poll()), (std::vector<std::string>{"tput1", "rtt0"}));
}

TEST_F(SchedulerTest, PerHostAMultiRailRunIsOneRunOverAllItsRails) {
  auto scheduler = Make({Bulk("multirail", {"rail0", "rail1"}), Bulk("tput2", {"rail2"})});
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"multirail"});
  ASSERT_TRUE(scheduler->Finished("multirail", 1000));
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput2"});
}

TEST_F(SchedulerTest, PerHostAWaitingBulkRunIsNotOvertakenByALaterOne) {
  std::vector<ProbeJob> jobs = {Job("tput0", {"rail0"}, ProbeLoad::kBulk, 1000s, 10s, 1000, 0),
                                Job("tput1", {"rail1"}, ProbeLoad::kBulk, 1000s, 10s, 1000, 0),
                                Job("tput2", {"rail2"}, ProbeLoad::kBulk, 1000s, 10s, 1000, 0)};
  auto scheduler = Make(jobs);
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput0"});
  ASSERT_TRUE(scheduler->Finished("tput0", 1000));
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput1"});  // in the order due
  ASSERT_TRUE(scheduler->Finished("tput1", 1000));
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput2"});
}

TEST_F(SchedulerTest, MultiRailBulkWaitsForEveryRail) {
  auto scheduler = Make(
      {Bulk("tput0", {"rail0"}), Bulk("multirail", {"rail0", "rail1"}), Bulk("tput1", {"rail1"})});
  // multirail fell due with tput0 and is kept waiting by rail0; it reserves rail1 too, so tput1,
  // listed after it, does not slip in and delay it further.
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput0"});
  ASSERT_TRUE(scheduler->Finished("tput0", 1000));
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"multirail"});
}

TEST_F(SchedulerTest, NoLatencyProbeOnARailWhileABulkTransferUsesIt) {
  auto scheduler =
      Make({Bulk("tput0", {"rail0"}), Latency("rtt0", {"rail0"}), Latency("rtt1", {"rail1"})});
  EXPECT_EQ(Names(scheduler->Poll()), (std::vector<std::string>{"tput0", "rtt1"}));
  clock_.Advance(2s);
  EXPECT_TRUE(scheduler->Poll().start.empty());
  ASSERT_TRUE(scheduler->Finished("tput0", 1000));
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"rtt0"});
}

TEST_F(SchedulerTest, LatencyProbesShareARail) {
  auto scheduler = Make({Latency("rtt-8b", {"rail0"}), Latency("rtt-4k", {"rail0"})});
  EXPECT_EQ(Names(scheduler->Poll()), (std::vector<std::string>{"rtt-8b", "rtt-4k"}));
}

TEST_F(SchedulerTest, WaitingBulkIsNotStarvedByLatencyProbes) {
  // rtt-first is running when tput falls due; rtt-later falls due after tput and must not start
  // ahead of it, or a stream of latency probes could keep the rail busy for ever.
  std::vector<ProbeJob> jobs = {Job("rtt-first", {"rail0"}, ProbeLoad::kLatency, 100s, 20s),
                                Job("tput", {"rail0"}, ProbeLoad::kBulk, 1000s, 10s, 1000, 0),
                                Job("rtt-later", {"rail0"}, ProbeLoad::kLatency, 100s, 5s)};
  auto scheduler = Make(jobs);
  // All fall due at once; run order is configuration order: rtt-first starts, tput waits for
  // it and reserves rail0, so rtt-later waits too.
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"rtt-first"});
  ASSERT_TRUE(scheduler->Finished("rtt-first", 0));
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput"});
  ASSERT_TRUE(scheduler->Finished("tput", 1000));
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"rtt-later"});
}

TEST_F(SchedulerTest, TimeoutReportsTheRunAndReleasesItsRails) {
  auto scheduler = Make({Bulk("tput0", {"rail0"}), Latency("rtt0", {"rail0"})});
  const PollResult first = scheduler->Poll();
  ASSERT_EQ(Names(first), std::vector<std::string>{"tput0"});
  EXPECT_EQ(first.start[0].deadline, clock_.Now() + 10s);

  clock_.Advance(9s);
  EXPECT_TRUE(scheduler->Poll().timed_out.empty());
  EXPECT_EQ(scheduler->NextWakeUp(), clock_.Now() + 1s);  // the deadline

  clock_.Advance(1s);
  const PollResult at_deadline = scheduler->Poll();
  EXPECT_EQ(at_deadline.timed_out, std::vector<std::string>{"tput0"});
  EXPECT_EQ(Names(at_deadline), std::vector<std::string>{"rtt0"});  // rail0 is free again
  EXPECT_FALSE(scheduler->IsRunning("tput0"));
  EXPECT_FALSE(scheduler->Finished("tput0", 1000));  // a late finish is ignored
  EXPECT_FALSE(scheduler->Finished("no-such-job", 0));
}

TEST_F(SchedulerTest, AStartAllowanceHoldsTheRailsLongerButCostsNoBudget) {
  ProbeJob tput = Bulk("tput0", {"rail0"});
  tput.interval = 100s;  // 10 s of 100 s: 10%, over a budget of 10%
  tput.start_allowance = 30s;
  SchedulerOptions options;
  options.budget.max_bulk_time_fraction_per_rail = 0.1;
  EXPECT_EQ(ValidateJobs({tput}, options.budget), std::nullopt);  // the wait moves nothing
  auto scheduler = Make({tput, Latency("rtt0", {"rail0"})}, options);
  const PollResult first = scheduler->Poll();
  ASSERT_EQ(Names(first), std::vector<std::string>{"tput0"});
  EXPECT_EQ(first.start[0].deadline, clock_.Now() + 40s);
  clock_.Advance(39s);  // past the timeout alone: still waiting for its start, rails held
  const PollResult waiting = scheduler->Poll();
  EXPECT_TRUE(waiting.timed_out.empty());
  EXPECT_TRUE(waiting.start.empty());
  clock_.Advance(1s);
  const PollResult at_deadline = scheduler->Poll();
  EXPECT_EQ(at_deadline.timed_out, std::vector<std::string>{"tput0"});
  EXPECT_EQ(Names(at_deadline), std::vector<std::string>{"rtt0"});
}

TEST_F(SchedulerTest, NextWakeUpIsNeverNowForABlockedJob) {
  auto scheduler = Make({Bulk("tput0", {"rail0"}), Latency("rtt0", {"rail0"})});
  scheduler->Poll();
  clock_.Advance(1s);
  // rtt0 is overdue but blocked; the next event is tput0's deadline, not "now".
  EXPECT_EQ(scheduler->NextWakeUp(), clock_.Now() + 9s);
  ASSERT_TRUE(scheduler->Finished("tput0", 1000));
  EXPECT_EQ(scheduler->NextWakeUp(), clock_.Now());  // rtt0 can start right away
}

TEST_F(SchedulerTest, NoJobsMeansNoWakeUp) {
  auto scheduler = Make({});
  EXPECT_EQ(scheduler->NextWakeUp(), std::nullopt);
  EXPECT_TRUE(scheduler->Poll().start.empty());
}

TEST_F(SchedulerTest, BulkTimeBudgetValidationNamesJobAndRail) {
  SchedulerOptions options;
  options.budget.max_bulk_time_fraction_per_rail = 0.05;
  // 4 s of every 100 s, then 2 s more on rail0: 6% > 5%.
  std::vector<ProbeJob> jobs = {Job("tput0", {"rail0"}, ProbeLoad::kBulk, 100s, 4s),
                                Job("tput1", {"rail1"}, ProbeLoad::kBulk, 100s, 4s),
                                Job("multirail", {"rail1", "rail0"}, ProbeLoad::kBulk, 100s, 2s)};
  std::string error;
  EXPECT_EQ(Scheduler::Create(jobs, options, clock_, &error), nullptr);
  EXPECT_EQ(error,
            "job \"multirail\" would let bulk probes on rail \"rail1\" take up to 6% of the time "
            "(timeout / shortest jittered interval, summed over the rail's bulk jobs); the budget "
            "is 5%: lengthen the interval or shorten the timeout");
  jobs[2].interval = 200s;  // 1% more: exactly 5%
  EXPECT_EQ(ValidateJobs(jobs, options.budget), std::nullopt);
}

TEST_F(SchedulerTest, BudgetAssumesTheShortestJitteredInterval) {
  Budget budget;
  budget.max_bulk_time_fraction_per_rail = 0.05;
  // 4.5 s of a 100 s interval that jitter may shorten to 90 s: exactly 5%.
  ProbeJob job = Job("tput0", {"rail0"}, ProbeLoad::kBulk, 100s, 4500ms, 1000, 0.1);
  EXPECT_EQ(ValidateJobs({job}, budget), std::nullopt);
  job.timeout = 4600ms;
  ASSERT_TRUE(ValidateJobs({job}, budget));
  EXPECT_NE(ValidateJobs({job}, budget)->find("job \"tput0\""), std::string::npos);
}

TEST_F(SchedulerTest, ByteBudgetValidationNamesTheJob) {
  Budget budget;
  budget.max_bytes_per_hour = 100'000'000'000;  // 100 GB
  // 1 GB a minute is 60 GB an hour; a second such job makes 120 GB.
  std::vector<ProbeJob> jobs = {Job("tput0", {"rail0"}, ProbeLoad::kBulk, 60s, 1s, 1'000'000'000),
                                Job("tput1", {"rail1"}, ProbeLoad::kBulk, 60s, 1s, 1'000'000'000)};
  EXPECT_EQ(ValidateJobs(jobs, budget),
            "job \"tput1\" would let all probes together move up to 120000000000 bytes per hour; "
            "the budget is 100000000000: lengthen intervals or send fewer bytes");
}

TEST_F(SchedulerTest, MalformedJobsAreRefusedByName) {
  const Budget budget;
  ProbeJob good = Latency("rtt0", {"rail0"});
  auto check = [&](ProbeJob job) { return ValidateJobs({good, job}, budget).value_or("valid"); };

  EXPECT_EQ(check(Latency("rtt0", {"rail1"})), "job \"rtt0\": name used twice");
  EXPECT_EQ(check(Latency("x", {})), "job \"x\": lists no rails");
  EXPECT_EQ(check(Latency("x", {"rail0", "rail0"})), "job \"x\": lists rail \"rail0\" twice");
  ProbeJob job = Latency("x", {"rail0"});
  job.jitter_fraction = 1.0;
  EXPECT_EQ(check(job), "job \"x\": jitter_fraction must be in [0, 1)");
  job = Latency("x", {"rail0"});
  job.timeout = 0s;
  EXPECT_EQ(check(job), "job \"x\": timeout must be positive");
  job = Bulk("x", {"rail0"});
  job.expected_bytes = 0;
  EXPECT_EQ(check(job),
            "job \"x\": expected_bytes must be positive for a bulk probe (the byte budget needs "
            "it)");
}

TEST_F(SchedulerTest, BytesMovedAreChargedAndHoldBackJobsUntilTheyAgeOut) {
  SchedulerOptions options;
  options.budget.max_bytes_per_hour = 1000;
  // Declares 100 bytes every 6 minutes (1000 per hour, within budget), but moves 600.
  auto scheduler = Make({Job("tput0", {"rail0"}, ProbeLoad::kBulk, 6min, 1s, 100)}, options);
  const TimePoint origin = clock_.Now();

  ASSERT_EQ(scheduler->Poll().start.size(), 1u);
  EXPECT_EQ(scheduler->BytesInLastHour(), 100u);  // charged at start
  ASSERT_TRUE(scheduler->Finished("tput0", 600));
  EXPECT_EQ(scheduler->BytesInLastHour(), 600u);  // actual bytes once finished

  clock_.Advance(6min);
  ASSERT_EQ(scheduler->Poll().start.size(), 1u);  // 600 + 100 fits
  ASSERT_TRUE(scheduler->Finished("tput0", 600));

  clock_.Advance(6min);
  EXPECT_TRUE(scheduler->Poll().start.empty());     // 1200 + 100 does not
  EXPECT_EQ(scheduler->NextWakeUp(), origin + 1h);  // when the first run leaves the window

  clock_.Set(origin + 1h);
  EXPECT_EQ(scheduler->Poll().start.size(), 1u);
}

// Room for bulk jobs with short intervals.
SchedulerOptions RoomyBudget() {
  SchedulerOptions options;
  options.budget.max_bulk_time_fraction_per_rail = 0.5;
  return options;
}

TEST_F(SchedulerTest, ABusyRunFreesTheHostAndIsRetriedAfterTheHintWithJitter) {
  auto scheduler = Make({Job("tput0", {"rail0"}, ProbeLoad::kBulk, 100s, 10s, 1000, 0),
                         Job("tput1", {"rail1"}, ProbeLoad::kBulk, 100s, 10s, 1000, 0)},
                        RoomyBudget());
  const TimePoint origin = clock_.Now();
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput0"});
  ASSERT_TRUE(scheduler->Busy("tput0", 0, 4s));
  EXPECT_FALSE(scheduler->IsRunning("tput0"));
  EXPECT_EQ(scheduler->BytesInLastHour(), 0u);  // a busy run moved nothing
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput1"});  // the host is free
  ASSERT_TRUE(scheduler->Finished("tput1", 1000));

  // The retry comes after the hint, stretched by up to busy_retry.jitter.
  const std::optional<TimePoint> retry = scheduler->NextWakeUp();
  ASSERT_TRUE(retry);
  EXPECT_GE(*retry, origin + 4s);
  EXPECT_LE(*retry, origin + 6s);
  clock_.Set(*retry - 1ms);
  EXPECT_TRUE(scheduler->Poll().start.empty());
  clock_.Set(*retry);
  EXPECT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput0"});
  ASSERT_TRUE(scheduler->Finished("tput0", 1000));
  // The retry kept the regular run where it was: 100 s after the first start.
  EXPECT_EQ(scheduler->NextWakeUp(), origin + 100s);
}

TEST_F(SchedulerTest, ARetryIsOnlyWithinTheCurrentInterval) {
  auto scheduler =
      Make({Job("tput0", {"rail0"}, ProbeLoad::kBulk, 10s, 1s, 1000, 0)}, RoomyBudget());
  const TimePoint origin = clock_.Now();
  ASSERT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput0"});
  ASSERT_TRUE(scheduler->Busy("tput0", 0, 20s));  // past the next regular run: no retry
  EXPECT_EQ(scheduler->NextWakeUp(), origin + 10s);

  // Busy again and again: each retry still falls before the regular run, never after it.
  clock_.Set(origin + 10s);
  ASSERT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput0"});
  int retries = 0;
  while (scheduler->IsRunning("tput0")) {
    ASSERT_TRUE(scheduler->Busy("tput0", 0, 3s));
    const std::optional<TimePoint> wake = scheduler->NextWakeUp();
    ASSERT_TRUE(wake);
    EXPECT_LE(*wake, origin + 20s);
    clock_.Set(*wake);
    if (*wake == origin + 20s) break;  // the regular run
    ASSERT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput0"});
    ++retries;
  }
  EXPECT_GE(retries, 1);
  EXPECT_LE(retries, 3);  // 3 s and more apart within 10 s
}

TEST_F(SchedulerTest, ABusyRunIsChargedItsBytesAndAHintBelowTheFloorWaitsTheFloor) {
  SchedulerOptions options;
  options.busy_retry.jitter = 0;
  auto scheduler = Make({Job("tput0", {"rail0"}, ProbeLoad::kBulk, 100s, 1s, 1000, 0)}, options);
  ASSERT_EQ(Names(scheduler->Poll()), std::vector<std::string>{"tput0"});
  ASSERT_TRUE(scheduler->Busy("tput0", 300, 0s));
  EXPECT_EQ(scheduler->BytesInLastHour(), 300u);  // what its sizes before the refusal moved
  EXPECT_EQ(scheduler->NextWakeUp(), clock_.Now() + options.busy_retry.floor);
  EXPECT_FALSE(scheduler->Busy("tput0", 0, 1s));  // not running
  EXPECT_FALSE(scheduler->Busy("no-such-job", 0, 1s));
}

}  // namespace
}  // namespace rail::schedule
