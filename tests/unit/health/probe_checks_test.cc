// The probe-derived checks on hand-built results: multirail_striping, probe_throughput,
// transport_fallback, and peer_version.
#include <gmock/gmock.h>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ProbeThroughputTest, ThrottledRailFailsAgainstItsSiblingOnly) {
  Host host("spark-dual-rail", LabConfig());
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 6 * kGbit);
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail1"}, 0.95 * kGbit);
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "probe_throughput", "rail0", "b")->ok);
  const auto slow = Find(results, "probe_throughput", "rail1", "b");
  EXPECT_FALSE(slow->ok);
  EXPECT_EQ(slow->reason,
            "ucx_throughput (size 1048576) reached 0.95 Gbit/s, below 50% of its sibling rails' "
            "median 6 Gbit/s (rail0 6 Gbit/s) (health.probe_throughput_min_sibling_fraction); "
            "the run's fabric counters could not be read, so congestion and link faults are not "
            "ruled out");
}

TEST(ProbeThroughputTest, EvenRailsPass) {
  Host host("spark-dual-rail", LabConfig());
  host.AddResult(probe::ProbeKind::kTcpThroughput, {"rail0"}, 6 * kGbit);
  host.AddResult(probe::ProbeKind::kTcpThroughput, {"rail1"}, 4 * kGbit);
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "probe_throughput", "rail0", "b")->ok);
  EXPECT_TRUE(Find(results, "probe_throughput", "rail1", "b")->ok);
}

TEST(ProbeThroughputTest, SiblingsAreOnlyTheSamePeerKindAndSize) {
  Host host("spark-dual-rail", LabConfig());
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 6 * kGbit);
  host.AddResult(probe::ProbeKind::kTcpThroughput, {"rail1"}, 1 * kGbit);       // other kind
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail1"}, 5 * kGbit, "c");  // other peer
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "probe_throughput", "rail1", "b")->ok);
  EXPECT_TRUE(Find(results, "probe_throughput", "rail1", "c")->ok);
}

TEST(ProbeThroughputTest, BelowTheLineRateFails) {
  HostConfig config;
  config.rails = {DeviceRail("rail0", "rocep1s0f0")};  // 100 Gb/s port
  Host host("spark-dual-rail", config);
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 30 * kGbit);
  auto verdict = Find(host.Evaluate(), "probe_throughput", "rail0", "b");
  EXPECT_FALSE(verdict->ok);
  EXPECT_EQ(verdict->reason,
            "ucx_throughput (size 1048576) reached 30 Gbit/s, below 50% of the line rate "
            "100 Gbit/s (health.probe_throughput_min_line_rate_fraction); the run's fabric "
            "counters could not be read, so congestion and link faults are not ruled out");

  host.config.health.probe_throughput_min_line_rate_fraction = 0.25;
  EXPECT_TRUE(Find(host.Evaluate(), "probe_throughput", "rail0", "b")->ok);
}

TEST(ProbeThroughputTest, TcpIsNotJudgedAgainstTheLineRate) {
  HostConfig config;
  config.rails = {DeviceRail("rail0", "rocep1s0f0")};
  Host host("spark-dual-rail", config);
  host.AddResult(probe::ProbeKind::kTcpThroughput, {"rail0"}, 20 * kGbit);
  EXPECT_TRUE(Find(host.Evaluate(), "probe_throughput", "rail0", "b")->ok);
}

TEST(ProbeThroughputTest, StaleAndFailedResultsAreIgnored) {
  Host host("spark-dual-rail", LabConfig());
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 6 * kGbit);
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail1"}, 0.5 * kGbit);
  auto inputs = host.Inputs();
  inputs.is_current = [](const probe::SeriesState& state) { return state.key.rail != "rail0"; };
  const auto results = EvaluateChecks(inputs);
  EXPECT_TRUE(Find(results, "probe_throughput", "rail1", "b")->ok) << "no current sibling";
  EXPECT_FALSE(Find(results, "probe_throughput", "rail0", "b"));

  host.series[0].last.success = false;
  EXPECT_TRUE(Find(host.Evaluate(), "probe_throughput", "rail1", "b")->ok);
}

TEST(MultirailStripingTest, OneRailCarryingMostBytesFails) {
  Host host("spark-dual-rail", LabConfig());
  auto& run =
      host.AddResult(probe::ProbeKind::kUcxMultirailThroughput, {"rail0", "rail1"}, 5 * kGbit);
  run.counters = {{"rail0", 930, 0, 0.93}, {"rail1", 70, 0, 0.07}};
  auto verdict = Find(host.Evaluate(), "multirail_striping", "", "b");
  EXPECT_FALSE(verdict->ok);
  EXPECT_EQ(verdict->reason,
            "rail0 carried 93% of the bytes of ucx_multirail_throughput over rail0+rail1 (size "
            "1048576), more than 80% (health.multirail_max_rail_share): UCX is not striping");

  host.config.health.multirail_max_rail_share = 0.95;
  EXPECT_TRUE(Find(host.Evaluate(), "multirail_striping", "", "b")->ok);
}

TEST(MultirailStripingTest, EvenSplitPassesAndOneCountedRailIsNoVerdict) {
  Host host("spark-dual-rail", LabConfig());
  auto& run =
      host.AddResult(probe::ProbeKind::kUcxMultirailThroughput, {"rail0", "rail1"}, 5 * kGbit);
  run.counters = {{"rail0", 550, 0, 0.55}, {"rail1", 450, 0, 0.45}};
  EXPECT_TRUE(Find(host.Evaluate(), "multirail_striping", "", "b")->ok);

  // Counters of only one probed rail (the other's were unreadable): striping is unknown.
  host.series.back().last.counters = {{"rail0", 1000, 0, 1.0}};
  EXPECT_EQ(test::Count(host.Evaluate(), "multirail_striping"), 0u);
}

TEST(TransportFallbackTest, RdmaRailOverTcpFails) {
  HostConfig config;
  config.rails = {DeviceRail("rail0", "rocep1s0f0"), DeviceRail("rail1", "rocep1s0f1")};
  Host host("spark-dual-rail", config);
  auto& bad = host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 1 * kGbit);
  bad.fallback_rails = {"rail0"};
  bad.lanes = {{"tcp", "enp1s0f0np0", "rail0"}};
  auto& good = host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail1"}, 1 * kGbit);
  good.lanes = {{"rc_mlx5", "rocep1s0f1:1", "rail1"}};
  host.AddResult(probe::ProbeKind::kTcpThroughput, {"rail1"}, 1 * kGbit);
  const auto results = host.Evaluate();
  const auto verdict = Find(results, "transport_fallback", "rail0", "b");
  EXPECT_FALSE(verdict->ok);
  EXPECT_EQ(verdict->reason,
            "ucx_throughput (size 1048576) used tcp on enp1s0f0np0 where RDMA was expected");
  EXPECT_TRUE(Find(results, "transport_fallback", "rail1", "b")->ok);
}

TEST(PeerVersionTest, DifferentVersionsFailOncePerPeer) {
  Host host("spark-dual-rail", LabConfig());
  host.AddResult(probe::ProbeKind::kUcxRtt, {"rail0"}, 0);
  host.AddResult(probe::ProbeKind::kUcxRtt, {"rail1"}, 0);
  auto& old = host.AddResult(probe::ProbeKind::kUcxRtt, {"rail0"}, 0, "c");
  old.peer_agent_version = "0.3.0";
  old.peer_ucx_version = "1.14.1";
  const auto results = host.Evaluate();
  EXPECT_EQ(test::Count(results, "peer_version"), 2u);
  EXPECT_TRUE(Find(results, "peer_version", "", "b")->ok);
  const auto verdict = Find(results, "peer_version", "", "c");
  EXPECT_FALSE(verdict->ok);
  EXPECT_EQ(verdict->reason, "the peer runs agent 0.3.0 (ours 0.4.0), UCX 1.14.1 (ours 1.13.1)");
}

TEST(PeerVersionTest, PeerNeverReachedHasNoVerdict) {
  Host host("spark-dual-rail", LabConfig());
  auto& refused = host.AddResult(probe::ProbeKind::kUcxRtt, {"rail0"}, 0);
  refused.success = false;
  refused.peer_agent_version.clear();
  refused.peer_ucx_version.clear();
  EXPECT_EQ(test::Count(host.Evaluate(), "peer_version"), 0u);
}

}  // namespace
}  // namespace rail::health::test
