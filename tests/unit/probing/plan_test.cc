// What the plan gives the scheduler for a run that may wait for a restarting probe worker, and
// how the sizes of one run share that one wait.
#include "rail/probing/plan.h"

#include <gtest/gtest.h>

#include "rail/probe/skipped.h"
#include "rail/probe/worker.h"

namespace rail::probing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

ProbingConfig TwoKinds() {
  ProbingConfig config;
  config.peers = {{"b", "10.0.0.2:9841"}};
  for (const char* kind : {"ucx_rtt", "tcp_rtt"}) {
    ProbeConfig entry;
    entry.kind = kind;
    entry.message_sizes_bytes = {8, 4096};
    entry.timeout = seconds(5);
    config.probes.push_back(entry);
  }
  return config;
}

std::vector<probe::ProbeRail> OneRail() {
  std::vector<probe::ProbeRail> rails(1);
  rails[0].name = "rail0";
  return rails;
}

TEST(ProbingPlanTest, UcxRunsMayWaitForTheWorkerBeforeTheirDeadlineTcpRunsDoNot) {
  const auto plan = PlanProbes(TwoKinds(), OneRail());
  ASSERT_EQ(plan.size(), 2u);
  const auto& ucx = plan[0].job;
  const auto& tcp = plan[1].job;
  ASSERT_EQ(ucx.kind, "ucx_rtt");
  // Two sizes of 5 s each and a second: the run's own bound, which the budget is checked with.
  EXPECT_EQ(ucx.timeout, seconds(11));
  EXPECT_EQ(ucx.start_allowance, probe::WorkerPolicy{}.max_restart_wait);
  ASSERT_EQ(tcp.kind, "tcp_rtt");
  EXPECT_EQ(tcp.timeout, seconds(11));
  EXPECT_EQ(tcp.start_allowance, milliseconds(0));  // the TCP kinds run in the agent itself
}

// Records whether each size's run may wait for a restarting worker; the second finds none.
class WorkerRestartingProbe final : public probe::Probe {
 public:
  probe::ProbeKind kind() const override { return probe::ProbeKind::kUcxRtt; }
  probe::ProbeResult Run(const probe::ProbeParams&, const probe::ProbeContext& context) override {
    waits.push_back(context.wait_for_worker);
    probe::ProbeResult result;
    result.kind = kind();
    result.success = waits.size() == 1;
    if (!result.success) result.error_reason = probe::kWorkerRestartingReason;
    return result;
  }
  std::vector<bool> waits;
};

TEST(ProbingPlanTest, OnlyTheFirstSizeOfARunWaitsForTheWorkerAndASkippedSizeEndsTheRun) {
  WorkerRestartingProbe probe;
  probe::ProbeParams params;
  params.kind = probe::ProbeKind::kUcxRtt;
  params.message_sizes_bytes = {8, 4096, 65536};
  const auto results = RunProbeSizes(probe, params, probe::ProbeContext{});
  EXPECT_EQ(probe.waits, (std::vector<bool>{true, false}));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].success);
  EXPECT_TRUE(probe::IsSkipped(results[1]));
  EXPECT_EQ(results[1].message_size_bytes, 4096u);
}

TEST(ProbingPlanTest, ACallerThatForbidsTheWaitIsObeyedFromTheFirstSize) {
  WorkerRestartingProbe probe;
  probe::ProbeParams params;
  params.message_sizes_bytes = {8};
  probe::ProbeContext context;
  context.wait_for_worker = false;
  RunProbeSizes(probe, params, context);
  EXPECT_EQ(probe.waits, std::vector<bool>{false});
}

}  // namespace
}  // namespace rail::probing
