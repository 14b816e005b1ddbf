// The runner checks every run's figures as it files them, and re-measures a capacity that a
// striped run shows to be low: on a fake clock, RunDue standing in for the runner thread.
#include <gtest/gtest.h>

#include <mutex>

#include "rail/probe/striping.h"
#include "rail/probing/runner.h"
#include "support/fake_clock.h"

namespace rail::probing {
namespace {

using std::chrono::seconds;

// Answers each kind with the throughput the test sets, and counts the runs of each.
class FixedProbe final : public probe::Probe {
 public:
  using Answer = std::function<probe::ProbeResult(probe::ProbeKind, int run)>;
  FixedProbe(probe::ProbeKind kind, Answer answer, std::map<probe::ProbeKind, int>* runs,
             std::mutex* mutex)
      : kind_(kind), answer_(std::move(answer)), runs_(runs), mutex_(mutex) {}
  probe::ProbeKind kind() const override { return kind_; }
  probe::ProbeResult Run(const probe::ProbeParams&, const probe::ProbeContext&) override {
    int run = 0;
    {
      std::lock_guard lock(*mutex_);
      run = ++(*runs_)[kind_];
    }
    return answer_(kind_, run);
  }

 private:
  probe::ProbeKind kind_;
  Answer answer_;
  std::map<probe::ProbeKind, int>* runs_;
  std::mutex* mutex_;
};

probe::ProbeResult MultiRail(probe::ProbeKind kind, double bytes_per_second) {
  probe::ProbeResult result;
  result.kind = kind;
  result.success = true;
  result.message_size_bytes = 1 << 20;
  result.seconds = 1;
  result.bytes = static_cast<std::uint64_t>(bytes_per_second);
  result.throughput_bytes_per_second = bytes_per_second;
  if (kind == probe::ProbeKind::kMultirailCapacity) {
    result.per_rail = {{"rail0", bytes_per_second / 2, result.bytes / 2},
                       {"rail1", bytes_per_second / 2, result.bytes - result.bytes / 2}};
  }
  return result;
}

PlannedProbe Job(probe::ProbeKind kind) {
  PlannedProbe planned;
  planned.params.kind = kind;
  planned.params.message_sizes_bytes = {1 << 20};
  planned.interval = seconds(120);
  planned.job.name = std::string(probe::ProbeKindName(kind)) + "/b";
  planned.job.kind = probe::ProbeKindName(kind);
  planned.job.peer = "b";
  planned.job.rails = {"rail0", "rail1"};
  planned.job.load = schedule::ProbeLoad::kBulk;
  planned.job.interval = planned.interval;
  planned.job.timeout = seconds(5);
  planned.job.expected_bytes = 1000;
  return planned;
}

class RunnerFiguresTest : public ::testing::Test {
 protected:
  std::unique_ptr<ProbeRunner> Make(FixedProbe::Answer answer) {
    schedule::SchedulerOptions options;
    options.budget.max_bulk_time_fraction_per_rail = 0.5;
    auto runner = std::make_unique<ProbeRunner>(
        std::vector<PlannedProbe>{Job(probe::ProbeKind::kMultirailCapacity),
                                  Job(probe::ProbeKind::kUcxMultirailThroughput)},
        options, probe::FigureLimits{}, probe::ProbeContext{},
        [this, answer](probe::ProbeKind kind) {
          return std::make_unique<FixedProbe>(kind, answer, &runs, &mutex);
        },
        store, clock);
    std::string error;
    EXPECT_TRUE(runner->Prepare(&error)) << error;
    return runner;
  }
  // Passes of the runner at one instant: what is due starts, ends and is filed.
  void Passes(ProbeRunner& runner, int count) {
    for (int pass = 0; pass < count; ++pass) {
      runner.RunDue();
      runner.WaitForRunsToEnd();
    }
    runner.RunDue();
  }
  int Runs(probe::ProbeKind kind) {
    std::lock_guard lock(mutex);
    return runs[kind];
  }
  const probe::SeriesState* Find(const std::vector<probe::SeriesState>& series,
                                 const std::string& kind) {
    for (const auto& state : series) {
      if (state.key.kind == kind) return &state;
    }
    return nullptr;
  }

  test::FakeClock clock;
  probe::ResultStore store{clock};
  std::mutex mutex;
  std::map<probe::ProbeKind, int> runs;
};

TEST_F(RunnerFiguresTest, AStripedRunAboveCapacityHasTheCapacityMeasuredAgainAtOnce) {
  // The first capacity measured low (1 GB/s); UCX's striping then reached 1.98 GB/s.
  auto runner = Make([](probe::ProbeKind kind, int run) {
    if (kind == probe::ProbeKind::kUcxMultirailThroughput) return MultiRail(kind, 1.98e9);
    return MultiRail(kind, run == 1 ? 1e9 : 2.4e9);
  });
  Passes(*runner, 3);
  EXPECT_EQ(Runs(probe::ProbeKind::kUcxMultirailThroughput), 1);
  // The capacity ran again without the clock moving: not 120 s later.
  EXPECT_EQ(Runs(probe::ProbeKind::kMultirailCapacity), 2);
  EXPECT_EQ(store.RemeasureCounts().at({"multirail_capacity", "b", "rail0+rail1"}), 1u);
  const auto efficiencies = probe::StripingEfficiencies(store.Snapshot(), {}, {});
  ASSERT_EQ(efficiencies.size(), 1u);
  ASSERT_TRUE(efficiencies[0].value) << efficiencies[0].withheld_reason;
  EXPECT_DOUBLE_EQ(*efficiencies[0].value, 1.98 / 2.4);
  // No further re-measure: the next striped run comes at its interval.
  Passes(*runner, 2);
  EXPECT_EQ(Runs(probe::ProbeKind::kMultirailCapacity), 2);
}

TEST_F(RunnerFiguresTest, AnEfficiencyInRangeAsksForNothing) {
  auto runner = Make([](probe::ProbeKind kind, int) {
    return MultiRail(kind, kind == probe::ProbeKind::kMultirailCapacity ? 2e9 : 1.5e9);
  });
  Passes(*runner, 4);
  EXPECT_EQ(Runs(probe::ProbeKind::kMultirailCapacity), 1);
  EXPECT_TRUE(store.RemeasureCounts().empty());
}

TEST_F(RunnerFiguresTest, ARunBreakingAnInvariantIsFiledWithItsFiguresWithheld) {
  auto runner = Make([](probe::ProbeKind kind, int) {
    auto result = MultiRail(kind, 2e9);
    if (kind == probe::ProbeKind::kMultirailCapacity) result.per_rail[1].bytes = 0;
    return result;
  });
  Passes(*runner, 3);
  const auto series = store.Snapshot();
  const auto* capacity = Find(series, "multirail_capacity");
  ASSERT_NE(capacity, nullptr);
  ASSERT_EQ(capacity->last.withheld.size(), 1u);
  EXPECT_EQ(capacity->last.withheld[0].invariant, probe::kRailBytesSum);
  EXPECT_EQ(capacity->withheld_by_invariant.at(probe::kRailBytesSum), 1u);
  EXPECT_TRUE(capacity->last.success) << "withheld figures are no failure of the rail";
  const auto efficiencies = probe::StripingEfficiencies(series, {}, {});
  ASSERT_EQ(efficiencies.size(), 1u);
  EXPECT_EQ(efficiencies[0].withheld_reason, probe::kFiguresWithheld);
}

}  // namespace
}  // namespace rail::probing
