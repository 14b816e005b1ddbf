#include "rail/probe/memory_ratio.h"

#include <gtest/gtest.h>

namespace rail::probe {
namespace {

SeriesState State(const std::string& rail, gpu::MemoryType memory, double throughput,
                  bool success = true, std::uint64_t size = 1 << 20) {
  SeriesState state;
  state.key = {"ucx_throughput", "peer-b", rail, size, 0, gpu::MemoryTypeName(memory)};
  state.last.success = success;
  state.last.memory = memory;
  state.last.memory_path = memory == gpu::MemoryType::kCuda ? "staged" : "host";
  state.last.throughput_bytes_per_second = throughput;
  return state;
}

TEST(MemoryRatioTest, EachGpuSeriesOverItsHostSeries) {
  const std::vector<SeriesState> series = {
      State("rail0", gpu::MemoryType::kHost, 10e9),
      State("rail0", gpu::MemoryType::kCuda, 0.5e9),
      State("rail0", gpu::MemoryType::kCudaHost, 9e9),
      State("rail1", gpu::MemoryType::kHost, 8e9),
      State("rail1", gpu::MemoryType::kCuda, 4e9),
  };
  const auto ratios = MemoryThroughputRatios(series, {}, {});
  ASSERT_EQ(ratios.size(), 3u);
  EXPECT_EQ(ratios[0].rail, "rail0");
  EXPECT_EQ(ratios[0].memory, gpu::MemoryType::kCuda);
  EXPECT_EQ(ratios[0].memory_path, "staged");
  EXPECT_DOUBLE_EQ(ratios[0].ratio, 0.05);
  EXPECT_DOUBLE_EQ(ratios[0].host_bytes_per_second, 10e9);
  EXPECT_EQ(ratios[1].memory, gpu::MemoryType::kCudaHost);
  EXPECT_DOUBLE_EQ(ratios[1].ratio, 0.9);
  EXPECT_EQ(ratios[2].rail, "rail1");
  EXPECT_DOUBLE_EQ(ratios[2].ratio, 0.5);
}

TEST(MemoryRatioTest, NoRatioWithoutAMatchingSuccessfulCurrentHostRun) {
  // Another size, a failed host run, a stale host run: no pair in any of them.
  EXPECT_TRUE(MemoryThroughputRatios({State("rail0", gpu::MemoryType::kHost, 10e9, true, 4096),
                                      State("rail0", gpu::MemoryType::kCuda, 1e9)},
                                     {}, {})
                  .empty());
  EXPECT_TRUE(MemoryThroughputRatios({State("rail0", gpu::MemoryType::kHost, 10e9, false),
                                      State("rail0", gpu::MemoryType::kCuda, 1e9)},
                                     {}, {})
                  .empty());
  const auto host_is_stale = [](const SeriesState& state) { return state.key.memory != "host"; };
  EXPECT_TRUE(MemoryThroughputRatios({State("rail0", gpu::MemoryType::kHost, 10e9),
                                      State("rail0", gpu::MemoryType::kCuda, 1e9)},
                                     host_is_stale, {})
                  .empty());
  // A failed GPU run has no figure to compare.
  EXPECT_TRUE(MemoryThroughputRatios({State("rail0", gpu::MemoryType::kHost, 10e9),
                                      State("rail0", gpu::MemoryType::kCuda, 1e9, false)},
                                     {}, {})
                  .empty());
}

TEST(MemoryRatioTest, TheStoreKeepsHostAndCudaRunsApart) {
  ResultStore store;
  ProbeResult result;
  result.kind = ProbeKind::kUcxThroughput;
  result.peer = "b";
  result.rails = {"rail0"};
  result.success = true;
  result.finished_at = std::chrono::system_clock::now();
  result.throughput_bytes_per_second = 10e9;
  store.Record(result, std::chrono::milliseconds(0));
  result.memory = gpu::MemoryType::kCuda;
  result.memory_path = "staged";
  result.throughput_bytes_per_second = 1e9;
  store.Record(result, std::chrono::milliseconds(0));
  const auto snapshot = store.Snapshot();
  ASSERT_EQ(snapshot.size(), 2u);
  const auto ratios = MemoryThroughputRatios(snapshot, {}, {});
  ASSERT_EQ(ratios.size(), 1u);
  EXPECT_DOUBLE_EQ(ratios[0].ratio, 0.1);
}

}  // namespace
TEST(MemoryRatioTest, NoRatioOfRunsTooFarApartOrWithWithheldFigures) {
  FigureLimits limits;
  limits.ratio_max_age = std::chrono::minutes(10);
  const auto now = std::chrono::system_clock::now();
  auto host = State("rail0", gpu::MemoryType::kHost, 10e9);
  auto cuda = State("rail0", gpu::MemoryType::kCuda, 1e9);
  host.last.finished_at = now - std::chrono::minutes(11);
  cuda.last.finished_at = now;
  EXPECT_TRUE(MemoryThroughputRatios({host, cuda}, {}, limits).empty());
  host.last.finished_at = now - std::chrono::minutes(9);
  EXPECT_EQ(MemoryThroughputRatios({host, cuda}, {}, limits).size(), 1u);
  // A run whose figures broke an invariant is no measurement to divide by.
  host.last.withheld = {{kLineRate, "above the line rate"}};
  EXPECT_TRUE(MemoryThroughputRatios({host, cuda}, {}, limits).empty());
}

}  // namespace rail::probe
