#include "rail/probe/rail_summary.h"

#include <gtest/gtest.h>

namespace rail::probe {
namespace {

SeriesState Throughput(const std::string& peer, const std::string& rail, double bytes_per_second,
                       std::uint64_t size = 1 << 20, bool success = true) {
  SeriesState state;
  state.key = {"ucx_throughput", peer, rail, size, 0, "host"};
  state.last.success = success;
  state.last.throughput_bytes_per_second = bytes_per_second;
  return state;
}

SeriesState Rtt(const std::string& peer, const std::string& rail, double p99) {
  SeriesState state;
  state.key = {"ucx_rtt", peer, rail, 8, 0, "host"};
  state.last.success = true;
  state.last.rtt = LatencySummary{};
  state.last.rtt->p99 = p99;
  return state;
}

const auto kAll = [](const SeriesState&) { return true; };

TEST(RailSummaryTest, MedianOverPeersAtTheirLargestSize) {
  const std::vector<SeriesState> series = {
      Throughput("a", "rail0", 10e9), Throughput("b", "rail0", 2e9), Throughput("c", "rail0", 6e9),
      // A smaller size of peer a: not its throughput figure.
      Throughput("a", "rail0", 1e9, 4096), Throughput("a", "rail1", 3e9)};
  const auto summaries = SummarizeRails(series, kAll);
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[0].rail, "rail0");
  EXPECT_EQ(summaries[0].peers_ok, 3u);
  EXPECT_DOUBLE_EQ(*summaries[0].median_throughput_bytes_per_second, 6e9);
  EXPECT_FALSE(summaries[0].worst_rtt_p99_seconds);
  EXPECT_DOUBLE_EQ(*summaries[1].median_throughput_bytes_per_second, 3e9);
}

TEST(RailSummaryTest, FailedPeersAreCountedNotAveraged) {
  const std::vector<SeriesState> series = {Throughput("a", "rail0", 10e9),
                                           Throughput("b", "rail0", 0, 1 << 20, false)};
  const auto summaries = SummarizeRails(series, kAll);
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].peers_ok, 1u);
  EXPECT_EQ(summaries[0].peers_failed, 1u);
  EXPECT_DOUBLE_EQ(*summaries[0].median_throughput_bytes_per_second, 10e9);
}

TEST(RailSummaryTest, WorstRttIsTheLargestP99AndOnlyIncludedSeriesCount) {
  const std::vector<SeriesState> series = {Rtt("a", "rail0", 20e-6), Rtt("b", "rail0", 90e-6),
                                           Rtt("old", "rail0", 900e-6)};
  const auto summaries =
      SummarizeRails(series, [](const SeriesState& state) { return state.key.peer != "old"; });
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_DOUBLE_EQ(*summaries[0].worst_rtt_p99_seconds, 90e-6);
  EXPECT_FALSE(summaries[0].median_throughput_bytes_per_second);
}

TEST(RailSummaryTest, MultiRailSeriesAreLeftOut) {
  SeriesState multi = Throughput("a", "rail0+rail1", 20e9);
  multi.key.kind = "ucx_multirail_throughput";
  EXPECT_TRUE(SummarizeRails({multi}, kAll).empty());
}

TEST(ResultStoreRetainTest, WithdrawsSeriesAndBusyCountsOfPeersNoLongerPlanned) {
  ResultStore store;
  ProbeResult result;
  result.kind = ProbeKind::kUcxRtt;
  result.rails = {"rail0"};
  result.success = true;
  result.finished_at = std::chrono::system_clock::now();
  for (const char* peer : {"a", "b", "c"}) {
    result.peer = peer;
    store.Record(result, std::chrono::milliseconds(0));
  }
  result.error_reason = "busy";
  result.success = false;
  store.RecordBusy(result);  // peer c
  ASSERT_EQ(store.SeriesCount(), 3u);
  store.Retain(
      [](const std::string&, const std::string& peer, const std::string&) { return peer != "c"; });
  EXPECT_EQ(store.SeriesCount(), 2u);
  EXPECT_TRUE(store.BusyCounts().empty());
  for (const auto& state : store.Snapshot()) EXPECT_NE(state.key.peer, "c");
}

}  // namespace
}  // namespace rail::probe
