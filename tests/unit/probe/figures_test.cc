// Every invariant of a run's figures, fed a run that breaks it: CheckRunFigures names it, and a run
// whose figures hold (or cannot be checked) gets no problem.
#include "rail/probe/figures.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rail::probe {
namespace {

ProbeParams TwoRails(std::optional<double> line_rate = std::nullopt) {
  ProbeParams params;
  params.kind = ProbeKind::kMultirailCapacity;
  for (const char* name : {"rail0", "rail1"}) {
    ProbeRail rail;
    rail.name = name;
    rail.line_rate = line_rate;
    params.rails.push_back(rail);
  }
  return params;
}

// A multirail_capacity run that obeys every invariant: 1 GB over two rails in one second, the
// rails' counters a little above the payload (headers).
ProbeResult CapacityRun() {
  ProbeResult result;
  result.kind = ProbeKind::kMultirailCapacity;
  result.rails = {"rail0", "rail1"};
  result.success = true;
  result.bytes = 1'000'000'000;
  result.seconds = 1;
  result.throughput_bytes_per_second = 1e9;
  result.per_rail = {{"rail0", 6e8, 600'000'000}, {"rail1", 4e8, 400'000'000}};
  result.counters = {{"rail0", 610'000'000, 1'000, 0.6}, {"rail1", 405'000'000, 1'000, 0.4}};
  result.spread = RateSpread{10, 0.9e9, 1.1e9, 1e9, 0.05};
  return result;
}

std::vector<std::string> Invariants(const std::vector<FigureProblem>& problems) {
  std::vector<std::string> names;
  for (const auto& problem : problems) names.push_back(problem.invariant);
  return names;
}

using Names = std::vector<std::string>;

TEST(FiguresTest, ARunWhoseFiguresHoldHasNoProblem) {
  EXPECT_TRUE(CheckRunFigures(CapacityRun(), TwoRails(25e9 / 8), {}).empty());
}

TEST(FiguresTest, PerRailBytesThatDoNotSumToTheRunsBytesAreWithheld) {
  ProbeResult run = CapacityRun();
  run.per_rail[1].bytes = 300'000'000;
  const auto problems = CheckRunFigures(run, TwoRails(), {});
  EXPECT_EQ(Invariants(problems), Names{kRailBytesSum});
  EXPECT_NE(problems[0].message.find("900000000"), std::string::npos) << problems[0].message;
}

TEST(FiguresTest, CountersThatSawFewerBytesThanTheProbeClaimsAreWithheld) {
  ProbeResult run = CapacityRun();
  run.counters[0].transmit_bytes = 400'000'000;  // 805 MB counted for 1 GB moved
  EXPECT_EQ(Invariants(CheckRunFigures(run, TwoRails(), {})), Names{kCounterBytes});
  // Within the tolerance: 960 MB counted of 1 GB is noise of the readings.
  run.counters[0].transmit_bytes = 555'000'000;
  EXPECT_TRUE(CheckRunFigures(run, TwoRails(), {}).empty());
  FigureLimits strict;
  strict.counter_tolerance = 0;
  EXPECT_EQ(Invariants(CheckRunFigures(run, TwoRails(), strict)), Names{kCounterBytes});
}

TEST(FiguresTest, AGetIsCheckedAgainstWhatTheRailsReceived) {
  ProbeResult run = CapacityRun();
  ProbeParams params = TwoRails();
  params.operation = UcxOperation::kGet;
  // The payload came in: the transmit counters only carried the requests.
  EXPECT_EQ(Invariants(CheckRunFigures(run, params, {})), Names{kCounterBytes});
  run.counters[0].receive_bytes = 601'000'000;
  run.counters[1].receive_bytes = 401'000'000;
  EXPECT_TRUE(CheckRunFigures(run, params, {}).empty());
}

TEST(FiguresTest, UnreadCountersProveNothingEitherWay) {
  ProbeResult run = CapacityRun();
  run.counters.pop_back();  // rail1's were not read
  run.counters[0].transmit_bytes = 1;
  EXPECT_TRUE(CheckRunFigures(run, TwoRails(), {}).empty());
}

TEST(FiguresTest, ARailFasterThanItsLineRateIsWithheld) {
  // 600 MB/s on a 4 Gbit/s (500 MB/s) rail.
  const auto problems = CheckRunFigures(CapacityRun(), TwoRails(4e9 / 8), {});
  EXPECT_EQ(Invariants(problems), Names{kLineRate});
  EXPECT_NE(problems[0].message.find("rail0"), std::string::npos) << problems[0].message;
}

TEST(FiguresTest, ASingleRailRunAboveItsLineRateIsWithheld) {
  ProbeResult run;
  run.kind = ProbeKind::kUcxThroughput;
  run.rails = {"rail0"};
  run.success = true;
  run.bytes = 1'000'000;
  run.throughput_bytes_per_second = 13.2e9;  // 105.6 Gbit/s
  ProbeParams params = TwoRails(100e9 / 8);
  params.rails.pop_back();
  EXPECT_EQ(Invariants(CheckRunFigures(run, params, {})), Names{kLineRate});
  run.throughput_bytes_per_second = 12.9e9;  // 103 Gbit/s: within 5%
  EXPECT_TRUE(CheckRunFigures(run, params, {}).empty());
}

TEST(FiguresTest, StripingAboveEveryRailTogetherIsWithheld) {
  ProbeResult run;
  run.kind = ProbeKind::kUcxMultirailThroughput;
  run.rails = {"rail0", "rail1"};
  run.success = true;
  run.bytes = 1'000'000;
  run.throughput_bytes_per_second = 2.2e9;  // 17.6 Gbit/s over two 8 Gbit/s rails
  EXPECT_EQ(Invariants(CheckRunFigures(run, TwoRails(8e9 / 8), {})), Names{kLineRate});
  // A rail without a known line rate: the rails' sum is unknown.
  ProbeParams params = TwoRails(8e9 / 8);
  params.rails[1].line_rate.reset();
  EXPECT_TRUE(CheckRunFigures(run, params, {}).empty());
}

TEST(FiguresTest, LatencyPercentilesOutOfOrderAreWithheld) {
  ProbeResult run;
  run.kind = ProbeKind::kUcxRtt;
  run.rails = {"rail0"};
  run.success = true;
  run.rtt = LatencySummary{100, 1e-6, 2e-6, 3e-6, 2.5e-6, 4e-6, 5e-6};  // p99 below p90
  EXPECT_EQ(Invariants(CheckRunFigures(run, {}, {})), Names{kRttOrder});
  run.rtt->p99 = 3.5e-6;
  EXPECT_TRUE(CheckRunFigures(run, {}, {}).empty());
  run.rtt->max = std::nan("");
  EXPECT_EQ(Invariants(CheckRunFigures(run, {}, {})), Names{kRttOrder});
}

TEST(FiguresTest, ASpreadThatIsNoSpreadIsWithheld) {
  ProbeResult run = CapacityRun();
  run.spread->min_bytes_per_second = 1.2e9;  // above its max
  EXPECT_EQ(Invariants(CheckRunFigures(run, TwoRails(), {})), Names{kIntervalSpread});
  run.spread = RateSpread{10, 0.9e9, 1.1e9, 1e9, -0.1};
  EXPECT_EQ(Invariants(CheckRunFigures(run, TwoRails(), {})), Names{kIntervalSpread});
}

TEST(FiguresTest, AFailedRunHasNoFiguresToCheck) {
  ProbeResult run = CapacityRun();
  run.success = false;
  run.per_rail[1].bytes = 0;
  EXPECT_TRUE(CheckRunFigures(run, TwoRails(), {}).empty());
}

TEST(FiguresTest, NoiseIsACoefficientOfVariationAboveTheLimit) {
  ProbeResult run = CapacityRun();
  FigureLimits limits;
  limits.max_interval_cv = 0.25;
  EXPECT_FALSE(IsNoisy(run, limits));
  run.spread->cv = 0.3;
  EXPECT_TRUE(IsNoisy(run, limits));
  run.spread.reset();  // too short for intervals: nothing says it was noise
  EXPECT_FALSE(IsNoisy(run, limits));
}

TEST(FiguresTest, TwoRunsAreCloseEnoughWithinTheRatioAge) {
  FigureLimits limits;
  limits.ratio_max_age = std::chrono::minutes(10);
  ProbeResult a;
  ProbeResult b;
  a.finished_at = std::chrono::system_clock::time_point(std::chrono::hours(1));
  b.finished_at = a.finished_at + std::chrono::minutes(10);
  EXPECT_TRUE(RunsCloseEnough(a, b, limits));
  EXPECT_TRUE(RunsCloseEnough(b, a, limits));
  b.finished_at += std::chrono::seconds(1);
  EXPECT_FALSE(RunsCloseEnough(a, b, limits));
  EXPECT_FALSE(RunsCloseEnough(b, a, limits));
}

}  // namespace
}  // namespace rail::probe
