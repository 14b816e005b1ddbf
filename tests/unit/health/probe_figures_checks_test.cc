// probe_throughput and multirail_striping on runs whose figures are noise or were withheld: they
// hold back (neither pass nor fail, and say why) instead of turning red.
#include <gmock/gmock.h>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;

probe::RateSpread Spread(double cv) {
  return {10, 0.2 * kGbit, 1.8 * kGbit, 1 * kGbit, cv};
}

TEST(ProbeFiguresChecksTest, AShortfallInANoisyRunIsHeldBackNotFailed) {
  Host host("spark-dual-rail", LabConfig());
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 6 * kGbit);
  auto& slow = host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail1"}, 1 * kGbit);
  slow.spread = Spread(0.6);
  auto verdict = *Find(host.Evaluate(), "probe_throughput", "rail1", "b");
  EXPECT_TRUE(verdict.held_back);
  EXPECT_TRUE(verdict.ok) << "not red";
  EXPECT_THAT(verdict.reason, HasSubstr("below 50% of its sibling rails' median"));
  EXPECT_THAT(verdict.reason, HasSubstr("cv 0.60, above figures.max_interval_cv 0.25"));
  // The same shortfall in a steady run is a real one.
  host.series.back().last.spread = Spread(0.1);
  verdict = *Find(host.Evaluate(), "probe_throughput", "rail1", "b");
  EXPECT_FALSE(verdict.held_back);
  EXPECT_FALSE(verdict.ok);
}

TEST(ProbeFiguresChecksTest, ANoisyRunWhoseRailShowedAFaultIsJudged) {
  // A lossy rail swings too: retransmissions during the run explain the spread.
  Host host("spark-dual-rail", LabConfig());
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 6 * kGbit);
  auto& lossy = host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail1"}, 1 * kGbit);
  lossy.spread = Spread(0.6);
  probe::RailFabricEvidence evidence;
  evidence.rail = "rail1";
  evidence.seconds = 2;
  evidence.counters = {{"hw_counters/out_of_sequence", 40}};
  lossy.fabric = {evidence};
  const auto verdict = *Find(host.Evaluate(), "probe_throughput", "rail1", "b");
  EXPECT_FALSE(verdict.held_back);
  EXPECT_FALSE(verdict.ok);
  EXPECT_THAT(verdict.reason,
              HasSubstr("during the run: the RDMA port out_of_sequence rose by 40"));
}

TEST(ProbeFiguresChecksTest, ANoisyRunThatMeetsTheBarPasses) {
  Host host("spark-dual-rail", LabConfig());
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 6 * kGbit).spread = Spread(0.6);
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail1"}, 5 * kGbit);
  const auto verdict = *Find(host.Evaluate(), "probe_throughput", "rail0", "b");
  EXPECT_TRUE(verdict.ok);
  EXPECT_FALSE(verdict.held_back);
}

TEST(ProbeFiguresChecksTest, WithheldFiguresAreNeitherJudgedNorAYardstick) {
  Host host("spark-dual-rail", LabConfig());
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 60 * kGbit).withheld = {
      {probe::kLineRate, "rail0 reached 60 Gbit/s, above its line rate 25 Gbit/s"}};
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail1"}, 5 * kGbit);
  const auto results = host.Evaluate();
  const auto withheld = *Find(results, "probe_throughput", "rail0", "b");
  EXPECT_TRUE(withheld.held_back);
  EXPECT_THAT(withheld.reason, HasSubstr("were withheld: rail0 reached 60 Gbit/s"));
  // rail1 is not below an impossible sibling.
  EXPECT_TRUE(Find(results, "probe_throughput", "rail1", "b")->ok);
  EXPECT_FALSE(Find(results, "probe_throughput", "rail1", "b")->held_back);
}

// A striped run that split its bytes evenly, with its capacity.
void StripedPair(Host& host, double striped, double capacity) {
  host.AddResult(probe::ProbeKind::kMultirailCapacity, {"rail0", "rail1"}, capacity);
  auto& run =
      host.AddResult(probe::ProbeKind::kUcxMultirailThroughput, {"rail0", "rail1"}, striped);
  run.counters = {{"rail0", 500, 0, 0.5}, {"rail1", 500, 0, 0.5}};
}

TEST(ProbeFiguresChecksTest, StripingBelowTheMinimumEfficiencyFails) {
  Host host("spark-dual-rail", LabConfig());
  StripedPair(host, 2 * kGbit, 10 * kGbit);
  auto verdict = *Find(host.Evaluate(), "multirail_striping", "", "b");
  EXPECT_FALSE(verdict.ok);
  EXPECT_EQ(verdict.reason,
            "UCX's striping reached 0.20 of the rails driven at once, below 0.6 "
            "(health.multirail_min_efficiency)");
  host.config.health.multirail_min_efficiency = 0.15;
  EXPECT_TRUE(Find(host.Evaluate(), "multirail_striping", "", "b")->ok);
}

TEST(ProbeFiguresChecksTest, ALowEfficiencyFromANoisyRunIsHeldBack) {
  Host host("spark-dual-rail", LabConfig());
  StripedPair(host, 2 * kGbit, 10 * kGbit);
  host.series.back().last.spread = Spread(0.5);
  const auto verdict = *Find(host.Evaluate(), "multirail_striping", "", "b");
  EXPECT_TRUE(verdict.held_back);
  EXPECT_THAT(verdict.reason, HasSubstr("noise, not judged"));
}

TEST(ProbeFiguresChecksTest, AnEfficiencyAboveCapacityIsHeldBackWithItsReason) {
  Host host("spark-dual-rail", LabConfig());
  StripedPair(host, 19.8 * kGbit, 10 * kGbit);
  const auto verdict = *Find(host.Evaluate(), "multirail_striping", "", "b");
  EXPECT_TRUE(verdict.held_back);
  EXPECT_THAT(verdict.reason, HasSubstr("striping efficiency withheld (above_capacity)"));
  EXPECT_THAT(verdict.reason, HasSubstr("1.98 times"));
}

TEST(ProbeFiguresChecksTest, ANotStripingRunFailsWhateverTheEfficiencySays) {
  Host host("spark-dual-rail", LabConfig());
  StripedPair(host, 19.8 * kGbit, 10 * kGbit);
  host.series.back().last.counters = {{"rail0", 990, 0, 0.99}, {"rail1", 10, 0, 0.01}};
  const auto verdict = *Find(host.Evaluate(), "multirail_striping", "", "b");
  EXPECT_FALSE(verdict.ok);
  EXPECT_FALSE(verdict.held_back);
  EXPECT_THAT(verdict.reason, HasSubstr("rail0 carried 99% of the bytes"));
}

}  // namespace
}  // namespace rail::health::test
