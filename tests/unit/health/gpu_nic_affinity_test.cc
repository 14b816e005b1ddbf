// gpu_nic_affinity on hand-built topologies: each rail by its nearest discrete GPU, the GPUs
// together by each one's nearest RDMA device, against health.gpu_nic_max_path.
#include <gmock/gmock.h>

#include <memory>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

using inventory::PciPath;

inventory::GpuNicPath Path(std::string gpu, std::string device, PciPath path) {
  return {std::move(gpu), std::move(device), path};
}

// One GPU next to rail0's NIC (PIX) and across the sockets from rail1's (SYS).
std::unique_ptr<Host> OneGpuNearRail0(HostConfig config = TwoRails()) {
  auto host = std::make_unique<Host>("spark-dual-rail", std::move(config));
  host->topology.gpus = {PcieGpu("0000:17:00.0", Link(32, 16, 32, 16))};
  host->topology.devices = {PciDevice("rocep1s0f0", "0000:18:00.0", Link(32, 16, 32, 16)),
                            PciDevice("rocep1s0f1", "0000:a5:00.0", Link(32, 16, 32, 16))};
  host->topology.paths = {Path("0000:17:00.0", "rocep1s0f0", PciPath::kPix),
                          Path("0000:17:00.0", "rocep1s0f1", PciPath::kSys)};
  return host;
}

TEST(GpuNicAffinityTest, RailFarFromEveryGpuFails) {
  const auto host = OneGpuNearRail0();
  const auto results = host->Evaluate();
  EXPECT_TRUE(Find(results, "gpu_nic_affinity", "rail0")->ok);
  const auto far = Find(results, "gpu_nic_affinity", "rail1");
  EXPECT_FALSE(far->ok);
  EXPECT_EQ(far->reason,
            "GPU 0000:17:00.0 and rocep1s0f1 are SYS apart (beyond PXB): GPUDirect RDMA between "
            "them crosses the inter-socket link");
  // The GPU itself has a NIC next to it.
  EXPECT_TRUE(Find(results, "gpu_nic_affinity", "")->ok);
}

TEST(GpuNicAffinityTest, GpuFarFromEveryNicFailsTheHostVerdict) {
  auto host = OneGpuNearRail0();
  host->topology.paths[0].path = PciPath::kNode;
  const auto verdict = Find(host->Evaluate(), "gpu_nic_affinity", "");
  EXPECT_FALSE(verdict->ok);
  EXPECT_THAT(verdict->reason, ::testing::HasSubstr("GPU 0000:17:00.0 and rocep1s0f0 are NODE"));
}

TEST(GpuNicAffinityTest, ThresholdComesFromTheConfiguration) {
  auto config = TwoRails();
  config.health.gpu_nic_max_path = PciPath::kSys;
  for (const auto& result : OneGpuNearRail0(config)->Evaluate()) {
    if (result.check == "gpu_nic_affinity") {
      EXPECT_TRUE(result.ok) << result.reason;
    }
  }
  config.health.gpu_nic_max_path = PciPath::kPix;
  EXPECT_FALSE(Find(OneGpuNearRail0(config)->Evaluate(), "gpu_nic_affinity", "rail1")->ok);
}

TEST(GpuNicAffinityTest, IntegratedGpusAreNotJudged) {
  auto c2c = OneGpuNearRail0();
  c2c->topology.gpus[0].attach = inventory::GpuAttach::kC2c;
  EXPECT_EQ(Count(c2c->Evaluate(), "gpu_nic_affinity"), 0u);

  auto integrated = OneGpuNearRail0();
  integrated->capabilities.emplace();
  integrated->capabilities->cuda.loaded = true;
  gpu::CudaDevice device;
  device.pci_bus_id = "0000:17:00.0";
  device.integrated = true;
  integrated->capabilities->cuda.devices = {device};
  EXPECT_EQ(Count(integrated->Evaluate(), "gpu_nic_affinity"), 0u);
}

TEST(GpuNicAffinityTest, NoGpuNoVerdict) {
  Host host("spark-dual-rail", TwoRails());
  host.topology.devices = {PciDevice("rocep1s0f0", "0000:18:00.0", Link(32, 16, 32, 16))};
  EXPECT_EQ(Count(host.Evaluate(), "gpu_nic_affinity"), 0u);
}

}  // namespace
}  // namespace rail::health::test
