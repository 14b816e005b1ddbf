// probe_failing on hand-built series: the failures in a row the result store counts
// (probe::SeriesState::consecutive_failures), the threshold, staleness, and that no verdict
// derived from a failing series' earlier successes stays green.
#include <gmock/gmock.h>

#include "health_fixture.h"
#include "rail/probe/result_store.h"
#include "support/fake_clock.h"

namespace rail::health::test {
namespace {

using std::chrono::minutes;
using ::testing::HasSubstr;

constexpr const char* kAssertion =
    "the probe worker died during the call (sigabrt); its last fatal line: [lab-a:812  :0:812]  "
    "ucp_request.c:684  Assertion `0' failed: got REQ message";

probe::ProbeResult ProbeRun(bool success, const std::string& reason, const base::Clock& clock) {
  probe::ProbeResult result;
  result.kind = probe::ProbeKind::kUcxThroughput;
  result.peer = "b";
  result.rails = {"rxe0:1"};
  result.message_size_bytes = 1 << 20;
  result.success = success;
  result.throughput_bytes_per_second = success ? 6e6 : 0;
  result.peer_agent_version = success ? "0.4.0" : "";
  result.peer_ucx_version = success ? "1.13.1" : "";
  if (!success) {
    result.error_reason = reason;
    result.error_message = reason == "worker_crashed" ? kAssertion : "no detail";
  }
  result.finished_at = clock.WallNow();
  return result;
}

// The store's series as the scrape hands them to the checks.
struct Probed {
  Probed() : host("rxe-dual-rail") {}
  void Record(bool success, const std::string& reason = "") {
    store.Record(ProbeRun(success, reason, clock), minutes(1));
  }
  std::vector<CheckResult> Evaluate() {
    host.series = store.Snapshot();
    auto inputs = host.Inputs();
    inputs.is_current = [this](const probe::SeriesState& state) { return store.IsCurrent(state); };
    return EvaluateChecks(inputs);
  }
  std::optional<CheckResult> Verdict() { return Find(Evaluate(), "probe_failing", "rxe0:1", "b"); }

  ::rail::test::FakeClock clock;
  probe::ResultStore store{clock};
  Host host;
};

TEST(ProbeFailingTest, FailsOnlyAtTheThirdFailureInARow) {
  Probed probed;
  probed.Record(true);
  EXPECT_TRUE(probed.Verdict()->ok);
  probed.Record(false, "worker_crashed");
  EXPECT_TRUE(probed.Verdict()->ok);
  probed.Record(false, "worker_crashed");
  EXPECT_TRUE(probed.Verdict()->ok);
  probed.Record(false, "worker_crashed");
  const auto verdict = probed.Verdict();
  ASSERT_TRUE(verdict);
  EXPECT_FALSE(verdict->ok);
  EXPECT_THAT(verdict->reason, HasSubstr("ucx_throughput (size 1048576) failed its last 3 runs "
                                         "(health.probe_failing_runs 3): worker_crashed"));
  EXPECT_THAT(verdict->reason, HasSubstr("ucp_request.c:684  Assertion `0' failed"));
}

TEST(ProbeFailingTest, TheThresholdIsConfigured) {
  Probed probed;
  probed.host.config.health.probe_failing_runs = 1;
  probed.Record(false, "timeout");
  EXPECT_FALSE(probed.Verdict()->ok);
}

TEST(ProbeFailingTest, BusyCancelledAndWorkerUnavailableRunsAreNotFailures) {
  Probed probed;
  probed.Record(false, "timeout");
  probed.Record(false, "timeout");
  probed.Record(false, "cancelled");
  probed.Record(false, "worker_unavailable");
  probed.store.RecordBusy(ProbeRun(false, probe::kBusyReason, probed.clock));
  EXPECT_TRUE(probed.Verdict()->ok);
  probed.Record(false, "timeout");
  EXPECT_FALSE(probed.Verdict()->ok);
}

TEST(ProbeFailingTest, ASuccessEndsIt) {
  Probed probed;
  for (int i = 0; i < 4; ++i) probed.Record(false, "timeout");
  EXPECT_FALSE(probed.Verdict()->ok);
  probed.Record(true);
  EXPECT_TRUE(probed.Verdict()->ok);
}

TEST(ProbeFailingTest, AFailingSeriesKeepsFailingWhenStale) {
  Probed probed;
  for (int i = 0; i < 3; ++i) probed.Record(false, "timeout");
  probed.clock.Advance(std::chrono::hours(1));
  EXPECT_FALSE(probed.Verdict()->ok);
}

TEST(ProbeFailingTest, AStalePassingSeriesGivesNoVerdict) {
  Probed probed;
  probed.Record(true);
  probed.clock.Advance(std::chrono::hours(1));
  EXPECT_FALSE(probed.Verdict());
}

TEST(ProbeFailingTest, ARecordWithoutRailsIsNoProbe) {
  Host host("rxe-dual-rail");
  host.AddResult(probe::ProbeKind::kTcpRtt, {}, 0).error_reason = "hello_only";  // doctor's
  EXPECT_EQ(Count(host.Evaluate(), "probe_failing"), 0u);
}

TEST(ProbeFailingTest, NoVerdictFromTheSeriesEarlierSuccessesStaysGreen) {
  Probed probed;
  probed.Record(true);
  auto results = probed.Evaluate();
  ASSERT_TRUE(Find(results, "probe_throughput", "rxe0:1", "b"));
  ASSERT_TRUE(Find(results, "peer_version", "", "b"));
  for (int i = 0; i < 3; ++i) probed.Record(false, "worker_crashed");
  results = probed.Evaluate();
  for (const auto& result : results) {
    if (result.peer == "b" && result.check != "probe_failing") {
      ADD_FAILURE() << result.check << " still judges peer b from an earlier success";
    }
  }
  EXPECT_FALSE(Find(results, "probe_failing", "rxe0:1", "b")->ok);
}

}  // namespace
}  // namespace rail::health::test
