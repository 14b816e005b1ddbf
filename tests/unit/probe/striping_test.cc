// The striping efficiency: published while its two runs' figures hold, withheld with a reason
// when they do not (figures.h, striping.h).
#include "rail/probe/striping.h"

#include <gtest/gtest.h>

namespace rail::probe {
namespace {

const auto kNow = std::chrono::system_clock::time_point(std::chrono::hours(100));

SeriesState Series(ProbeKind kind, double throughput, std::uint64_t size = 1 << 20,
                   std::string peer = "b") {
  SeriesState state;
  state.key = {ProbeKindName(kind), peer, "rail0+rail1", size, 0, "host"};
  state.last.kind = kind;
  state.last.peer = peer;
  state.last.rails = {"rail0", "rail1"};
  state.last.success = true;
  state.last.throughput_bytes_per_second = throughput;
  state.last.finished_at = kNow;
  return state;
}

std::vector<SeriesState> Pair(double striped, double capacity) {
  return {Series(ProbeKind::kMultirailCapacity, capacity),
          Series(ProbeKind::kUcxMultirailThroughput, striped)};
}

TEST(StripingTest, TheEfficiencyIsStripedOverCapacity) {
  const auto efficiencies = StripingEfficiencies(Pair(1.5e9, 2e9), {}, {});
  ASSERT_EQ(efficiencies.size(), 1u);
  EXPECT_EQ(efficiencies[0].peer, "b");
  ASSERT_TRUE(efficiencies[0].value);
  EXPECT_DOUBLE_EQ(*efficiencies[0].value, 0.75);
  EXPECT_EQ(efficiencies[0].withheld_reason, "");
  EXPECT_EQ(efficiencies[0].capacity.kind, "multirail_capacity");
}

TEST(StripingTest, AboveCapacityPlusToleranceIsWithheldAsALowCapacity) {
  // 1.98: the lab's "twice as fast as every rail driven at once".
  auto efficiencies = StripingEfficiencies(Pair(3.96e9, 2e9), {}, {});
  ASSERT_EQ(efficiencies.size(), 1u);
  EXPECT_FALSE(efficiencies[0].value);
  EXPECT_EQ(efficiencies[0].withheld_reason, kAboveCapacity);
  EXPECT_DOUBLE_EQ(efficiencies[0].ratio, 1.98);
  EXPECT_NE(efficiencies[0].message.find("1.98"), std::string::npos);
  // Up to the tolerance it is the two runs' noise.
  efficiencies = StripingEfficiencies(Pair(2.2e9, 2e9), {}, {});
  ASSERT_TRUE(efficiencies[0].value);
  EXPECT_DOUBLE_EQ(*efficiencies[0].value, 1.1);
}

TEST(StripingTest, NothingIsPublishedWhileTheCapacityIsMeasuredAgain) {
  auto series = Pair(1e9, 2e9);
  series[0].remeasure_requested = true;
  const auto efficiencies = StripingEfficiencies(series, {}, {});
  EXPECT_FALSE(efficiencies[0].value);
  EXPECT_EQ(efficiencies[0].withheld_reason, kAwaitingCapacity);
}

TEST(StripingTest, RunsFurtherApartThanTheRatioAgeAreNotDivided) {
  auto series = Pair(1e9, 2e9);
  series[0].last.finished_at = kNow - std::chrono::minutes(11);
  const auto efficiencies = StripingEfficiencies(series, {}, {});
  EXPECT_FALSE(efficiencies[0].value);
  EXPECT_EQ(efficiencies[0].withheld_reason, kRunsApart);
}

TEST(StripingTest, WithheldFiguresOfEitherRunWithholdTheEfficiency) {
  auto series = Pair(1e9, 2e9);
  series[1].last.withheld = {{kCounterBytes, "counters saw less"}};
  const auto efficiencies = StripingEfficiencies(series, {}, {});
  EXPECT_FALSE(efficiencies[0].value);
  EXPECT_EQ(efficiencies[0].withheld_reason, kFiguresWithheld);
}

TEST(StripingTest, OnlyACapacityOfTheSameSizeIsAYardstick) {
  std::vector<SeriesState> series = {Series(ProbeKind::kMultirailCapacity, 4e9, 4096),
                                     Series(ProbeKind::kMultirailCapacity, 2e9, 1 << 20),
                                     Series(ProbeKind::kUcxMultirailThroughput, 1e9, 4096)};
  EXPECT_DOUBLE_EQ(*StripingEfficiencies(series, {}, {})[0].value, 0.25);
  // 64 KiB striping against capacities of 4 KiB and 1 MiB: no efficiency at all.
  series[2].key.message_size_bytes = 65536;
  EXPECT_TRUE(StripingEfficiencies(series, {}, {}).empty());
  // Of two striped sizes with their capacities, the larger.
  series[2].key.message_size_bytes = 4096;
  series.push_back(Series(ProbeKind::kUcxMultirailThroughput, 1.5e9, 1 << 20));
  EXPECT_DOUBLE_EQ(*StripingEfficiencies(series, {}, {})[0].value, 0.75);
}

TEST(StripingTest, NoEfficiencyWithoutACurrentSuccessfulPair) {
  auto series = Pair(1e9, 2e9);
  series[0].last.success = false;
  EXPECT_TRUE(StripingEfficiencies(series, {}, {}).empty());
  series = Pair(1e9, 2e9);
  series[0].key.peer = "c";
  EXPECT_TRUE(StripingEfficiencies(series, {}, {}).empty());
  const auto stale = [](const SeriesState& state) {
    return state.key.kind != "multirail_capacity";
  };
  EXPECT_TRUE(StripingEfficiencies(Pair(1e9, 2e9), stale, {}).empty());
}

TEST(StripingTest, TheStoreWithholdsUntilTheCapacityRunsAgain) {
  ResultStore store;
  ProbeResult capacity = Series(ProbeKind::kMultirailCapacity, 2e9).last;
  capacity.message_size_bytes = 1 << 20;
  store.Record(capacity, {});
  const SeriesKey key = store.Snapshot()[0].key;
  EXPECT_TRUE(store.RequestRemeasure(key));
  EXPECT_FALSE(store.RequestRemeasure(key)) << "asked once per capacity run";
  EXPECT_TRUE(store.Snapshot()[0].remeasure_requested);
  EXPECT_EQ(store.RemeasureCounts().at({"multirail_capacity", "b", "rail0+rail1"}), 1u);
  store.Record(capacity, {});
  EXPECT_FALSE(store.Snapshot()[0].remeasure_requested);
  EXPECT_FALSE(store.RequestRemeasure({"multirail_capacity", "c", "rail0", 1, 0, "host"}));
}

TEST(StripingTest, TheStoreCountsWithheldRunsByInvariant) {
  ResultStore store;
  ProbeResult run = Series(ProbeKind::kMultirailCapacity, 2e9).last;
  run.withheld = {{kRailBytesSum, "x"}, {kLineRate, "y"}};
  store.Record(run, {});
  store.Record(run, {});
  const auto counts = store.Snapshot()[0].withheld_by_invariant;
  EXPECT_EQ(counts.at(kRailBytesSum), 2u);
  EXPECT_EQ(counts.at(kLineRate), 2u);
}

}  // namespace
}  // namespace rail::probe
