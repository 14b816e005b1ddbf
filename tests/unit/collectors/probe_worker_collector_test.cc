// The probe_worker collector's skipped runs: counted by kind, peer, rail and reason, apart from
// the runs of their series.
#include <gtest/gtest.h>

#include "rail/collectors/collector_set.h"
#include "rail/probe/skipped.h"
#include "support/fake_filesystem.h"
#include "support/scrape.h"

namespace rail::collectors {
namespace {

using test::Sample;
using test::SampleCount;

probe::ProbeResult Skipped(const char* reason, const std::string& rail) {
  probe::ProbeResult result;
  result.kind = probe::ProbeKind::kUcxThroughput;
  result.peer = "b";
  result.rails = {rail};
  result.error_reason = reason;
  return result;
}

TEST(ProbeWorkerCollectorTest, SkippedRunsAreCountedByReasonWithoutAWorkerStatus) {
  test::FakeFilesystem sys;
  test::FakeFilesystem proc;
  probe::ResultStore skipped;
  Sources sources;
  sources.inventory.sys = &sys;
  sources.inventory.proc = &proc;
  sources.health.results = &skipped;
  CollectorSet set(sources, std::vector<std::string>{"probe_worker"});
  EXPECT_EQ(SampleCount(set.Collect(), "rail_probe_skipped_total"), 0u);  // none yet: absent
  skipped.RecordSkipped(Skipped(probe::kWorkerRestartingReason, "rail1"));
  skipped.RecordSkipped(Skipped(probe::kWorkerRestartingReason, "rail1"));
  skipped.RecordSkipped(Skipped(probe::kCrashLoopReason, "rail0"));
  const auto families = set.Collect();
  EXPECT_EQ(SampleCount(families, "rail_probe_skipped_total"), 2u);
  EXPECT_EQ(Sample(families, "rail_probe_skipped_total",
                   {{"kind", "ucx_throughput"},
                    {"peer", "b"},
                    {"rail", "rail1"},
                    {"reason", "worker_restarting"}}),
            2.0);
  EXPECT_EQ(
      Sample(families, "rail_probe_skipped_total", {{"rail", "rail0"}, {"reason", "crash_loop"}}),
      1.0);
  skipped.Retain([](const std::string&, const std::string&, const std::string& rail) {
    return rail == "rail0";  // rail1's probe no longer planned
  });
  EXPECT_EQ(SampleCount(set.Collect(), "rail_probe_skipped_total"), 1u);
}

}  // namespace
}  // namespace rail::collectors
