// gpu_memory_throughput: GPU-memory runs against host-memory runs of the same kind, rail, peer
// and size (probe::MemoryThroughputRatios), below health.gpu_memory_min_host_ratio.
#include <gmock/gmock.h>

#include <memory>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

// A host-memory run at 11.6 GB/s and a cuda run at `cuda_bytes_per_second` over rail0 to "b".
std::unique_ptr<Host> WithRuns(double cuda_bytes_per_second, HostConfig config = {}) {
  config.rails = {DeviceRail("rail0", "rocep1s0f0")};
  auto host = std::make_unique<Host>("spark-dual-rail", config);
  host->AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 11.6e9);
  auto& cuda = host->AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, cuda_bytes_per_second);
  cuda.memory = gpu::MemoryType::kCuda;
  cuda.memory_path = "cuda_copy";
  host->series.back().key.memory = "cuda";
  return host;
}

TEST(GpuMemoryThroughputTest, StagedVramFailsTheRail) {
  // The Spark's measured VRAM figure: 4.9 Gbit/s against 93 Gbit/s from host memory.
  const auto verdict = Find(WithRuns(0.6e9)->Evaluate(), "gpu_memory_throughput", "rail0", "b");
  ASSERT_TRUE(verdict);
  EXPECT_FALSE(verdict->ok);
  EXPECT_THAT(verdict->reason, ::testing::HasSubstr("ucx_throughput with cuda memory"));
  EXPECT_THAT(verdict->reason, ::testing::HasSubstr("moved by cuda_copy"));
  EXPECT_THAT(verdict->reason, ::testing::HasSubstr("0.05 of host memory's 92.8 Gbit/s"));
}

TEST(GpuMemoryThroughputTest, NearHostSpeedPasses) {
  const auto verdict = Find(WithRuns(11e9)->Evaluate(), "gpu_memory_throughput", "rail0", "b");
  ASSERT_TRUE(verdict);
  EXPECT_TRUE(verdict->ok) << verdict->reason;
}

TEST(GpuMemoryThroughputTest, ThresholdComesFromTheConfiguration) {
  HostConfig config;
  config.health.gpu_memory_min_host_ratio = 0.01;
  EXPECT_TRUE(Find(WithRuns(0.6e9, config)->Evaluate(), "gpu_memory_throughput", "rail0", "b")->ok);
}

TEST(GpuMemoryThroughputTest, NoHostRunNoVerdict) {
  HostConfig config;
  config.rails = {DeviceRail("rail0", "rocep1s0f0")};
  Host host("spark-dual-rail", config);
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 0.6e9).memory =
      gpu::MemoryType::kCuda;
  EXPECT_EQ(Count(host.Evaluate(), "gpu_memory_throughput"), 0u);
}

}  // namespace
}  // namespace rail::health::test
