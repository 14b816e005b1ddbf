// The probe runner on a fake clock: RunDue stands in for the runner thread, so every start is at
// a time the test chose, and nothing sleeps.
#include "rail/probing/runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "rail/probe/skipped.h"
#include "support/fake_clock.h"

namespace rail::probing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A probe that answers what the test says, and counts its runs.
class ScriptedProbe final : public probe::Probe {
 public:
  using Script = std::function<probe::ProbeResult(const probe::ProbeContext&)>;
  ScriptedProbe(Script script, int* runs, std::mutex* mutex)
      : script_(std::move(script)), runs_(runs), mutex_(mutex) {}
  probe::ProbeKind kind() const override { return probe::ProbeKind::kTcpRtt; }
  probe::ProbeResult Run(const probe::ProbeParams&, const probe::ProbeContext& context) override {
    {
      std::lock_guard lock(*mutex_);
      ++*runs_;
    }
    return script_(context);
  }

 private:
  Script script_;
  int* runs_;
  std::mutex* mutex_;
};

probe::ProbeResult Success() {
  probe::ProbeResult result;
  result.kind = probe::ProbeKind::kTcpRtt;
  result.success = true;
  result.rtt_samples_seconds = {0.001};
  return result;
}

PlannedProbe Job(const std::string& rail, milliseconds interval = seconds(10)) {
  PlannedProbe planned;
  planned.params.kind = probe::ProbeKind::kTcpRtt;
  planned.params.message_sizes_bytes = {8};
  planned.interval = interval;
  planned.job.name = "tcp_rtt/b/" + rail;
  planned.job.kind = "tcp_rtt";
  planned.job.peer = "b";
  planned.job.rails = {rail};
  planned.job.interval = interval;
  planned.job.jitter_fraction = 0.1;
  planned.job.timeout = seconds(2);
  return planned;
}

class RunnerTest : public ::testing::Test {
 protected:
  std::unique_ptr<ProbeRunner> Make(std::vector<PlannedProbe> plan, ScriptedProbe::Script script,
                                    std::uint64_t seed = 7) {
    schedule::SchedulerOptions options;
    options.seed = seed;
    auto runner = std::make_unique<ProbeRunner>(
        std::move(plan), options, probe::FigureLimits{}, probe::ProbeContext{},
        [this, script](probe::ProbeKind) {
          return std::make_unique<ScriptedProbe>(script, &runs, &mutex);
        },
        store, clock);
    std::string error;
    EXPECT_TRUE(runner->Prepare(&error)) << error;
    return runner;
  }
  // Advances the fake clock in steps, letting every due run start and end at each step.
  void Drive(ProbeRunner& runner, base::Duration total, base::Duration step = milliseconds(100)) {
    for (base::Duration passed{}; passed < total; passed += step) {
      clock.Advance(step);
      runner.RunDue();
      runner.WaitForRunsToEnd();
      runner.RunDue();
    }
  }
  int Runs() {
    std::lock_guard lock(mutex);
    return runs;
  }

  test::FakeClock clock;
  probe::ResultStore store{clock};
  std::mutex mutex;
  int runs = 0;
};

TEST_F(RunnerTest, RunsEachJobOncePerIntervalOnTheInjectedClock) {
  auto runner = Make({Job("rail0")}, [](const auto&) { return Success(); });
  Drive(*runner, seconds(35));
  // First run within the first interval's jitter (1 s), then every 9-11 s: 4 runs in 35 s.
  EXPECT_GE(Runs(), 3);
  EXPECT_LE(Runs(), 4);
  const auto series = store.Snapshot();
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].runs, static_cast<std::uint64_t>(Runs()));
}

TEST_F(RunnerTest, StampsResultsWithTheInjectedClock) {
  auto runner = Make({Job("rail0")}, [](const auto&) { return Success(); });
  Drive(*runner, seconds(2));
  const auto series = store.Snapshot();
  ASSERT_EQ(series.size(), 1u);
  // The fake wall clock is decades away from the real one; the stamp is within the 2 s driven.
  EXPECT_LE(clock.WallNow() - series[0].last.finished_at, seconds(2));
  EXPECT_GE(clock.WallNow() - series[0].last.finished_at, base::Duration::zero());
  EXPECT_TRUE(store.IsCurrent(series[0]));
}

TEST_F(RunnerTest, TheSameSeedStartsTheSameJobsAtTheSameTimes) {
  std::vector<base::Duration> first, second;  // since each runner's start
  for (auto* starts : {&first, &second}) {
    const auto start = clock.Now();
    auto runner = Make({Job("rail0"), Job("rail1")}, [this, starts, start](const auto&) {
      std::lock_guard lock(mutex);
      starts->push_back(clock.Now() - start);
      return Success();
    });
    Drive(*runner, seconds(30));
    runner->Stop();
  }
  ASSERT_FALSE(first.empty());
  // Two jobs due at one pass start on two threads, in either order.
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  EXPECT_EQ(first, second);
}

TEST_F(RunnerTest, ABusyRefusalIsNoRunAndIsRetried) {
  int calls = 0;
  auto runner = Make({Job("rail0")}, [&calls](const auto&) {
    if (calls++ == 0) {
      probe::ProbeResult busy;
      busy.error_reason = "busy";
      busy.retry_after = milliseconds(500);
      return busy;
    }
    return Success();
  });
  Drive(*runner, seconds(5));
  EXPECT_EQ(Runs(), 2);  // the refused run and its retry, long before the next interval
  const auto series = store.Snapshot();
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].runs, 1u);
  EXPECT_TRUE(series[0].errors_by_reason.empty());
  ASSERT_EQ(store.BusyCounts().size(), 1u);
  EXPECT_EQ(store.BusyCounts().begin()->second, 1u);
}

TEST_F(RunnerTest, AFailedRunIsCountedWithItsReason) {
  auto runner = Make({Job("rail0")}, [](const auto&) {
    probe::ProbeResult refused;
    refused.error_reason = "refused";
    refused.error_message = "connection refused";
    return refused;
  });
  Drive(*runner, seconds(2));
  const auto series = store.Snapshot();
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].runs, 1u);
  EXPECT_EQ(series[0].errors_by_reason.at("refused"), 1u);
}

probe::ProbeResult Skipped(const char* reason) {
  probe::ProbeResult skipped;
  skipped.kind = probe::ProbeKind::kTcpRtt;
  skipped.error_reason = reason;
  skipped.error_message = "the probe worker could not run it";
  return skipped;
}

// A run the probe worker could not run (it did not come back from a restart in time) never ran:
// no run and no error of its series, counted apart, and the job runs again at its next turn.
TEST_F(RunnerTest, ARunSkippedForARestartingWorkerIsNoRunAndIsCountedApart) {
  int calls = 0;
  auto runner = Make({Job("rail0"), Job("rail1")}, [&calls, this](const auto&) {
    std::lock_guard lock(mutex);
    return calls++ == 0 ? Skipped(probe::kWorkerRestartingReason) : Success();
  });
  Drive(*runner, seconds(13));  // first turns within 1 s, the next 9-11 s later
  const auto counts = store.SkippedCounts();
  ASSERT_EQ(counts.size(), 1u);
  const auto& [key, count] = *counts.begin();
  EXPECT_EQ(key.kind, "tcp_rtt");
  EXPECT_EQ(key.peer, "b");
  EXPECT_EQ(key.reason, probe::kWorkerRestartingReason);
  EXPECT_EQ(count, 1u);
  std::uint64_t runs_filed = 0;
  for (const auto& series : store.Snapshot()) {
    EXPECT_TRUE(series.errors_by_reason.empty());
    runs_filed += series.runs;
  }
  // Every run but the skipped one was filed, and the skipped rail ran at its next turn.
  EXPECT_EQ(runs_filed, static_cast<std::uint64_t>(Runs() - 1));
  EXPECT_EQ(store.Snapshot().size(), 2u);
}

// In a crash loop the first size is skipped and the job's other sizes are not tried.
TEST_F(RunnerTest, ACrashLoopSkipsTheRunWithoutTryingItsOtherSizes) {
  PlannedProbe job = Job("rail0");
  job.params.message_sizes_bytes = {8, 4096};
  auto runner = Make({job}, [](const auto&) { return Skipped(probe::kCrashLoopReason); });
  Drive(*runner, seconds(2));
  EXPECT_EQ(Runs(), 1);
  EXPECT_TRUE(store.Snapshot().empty());
  ASSERT_EQ(store.SkippedCounts().size(), 1u);
  EXPECT_EQ(store.SkippedCounts().begin()->first.reason, probe::kCrashLoopReason);
}

// Stop cancels the run in flight (the probe sees context.cancel) and files nothing for it: a run
// the agent ended says nothing about the rail.
TEST_F(RunnerTest, StopCancelsTheRunInFlightWithoutFilingIt) {
  std::mutex started_mutex;
  std::condition_variable started_changed;
  bool started = false;
  auto runner = Make({Job("rail0")}, [&](const probe::ProbeContext& context) {
    {
      std::lock_guard lock(started_mutex);
      started = true;
    }
    started_changed.notify_all();
    while (!context.cancel->load()) std::this_thread::sleep_for(milliseconds(1));
    probe::ProbeResult cancelled;
    cancelled.error_reason = "cancelled";
    return cancelled;
  });
  for (int step = 0; step < 20 && Runs() == 0; ++step) {
    clock.Advance(milliseconds(100));
    runner->RunDue();
  }
  {
    std::unique_lock lock(started_mutex);
    started_changed.wait(lock, [&] { return started; });
  }
  runner->Stop();
  EXPECT_EQ(Runs(), 1);
  EXPECT_TRUE(store.Snapshot().empty());
}

}  // namespace
}  // namespace rail::probing
