// pcie_link on hand-built topologies: NICs by speed and width, GPUs by width, and by speed only
// as read during a current GPU-memory probe.
#include <gmock/gmock.h>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;

TEST(PcieLinkTest, NicAtHalfWidthFailsItsRailOnly) {
  Host host("spark-dual-rail", TwoRails());
  host.topology.devices = {PciDevice("rocep1s0f0", "0000:01:00.0", Link(32, 16, 32, 16)),
                           PciDevice("rocep1s0f1", "0000:01:00.1", Link(32, 8, 32, 16))};
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "pcie_link", "rail0")->ok);
  const auto degraded = Find(results, "pcie_link", "rail1");
  ASSERT_TRUE(degraded);
  EXPECT_FALSE(degraded->ok);
  EXPECT_EQ(degraded->reason,
            "rocep1s0f1 (0000:01:00.1) at 32 GT/s x8, can train at 32 GT/s x16: reseat or check "
            "the slot/riser");
  EXPECT_FALSE(Find(results, "pcie_link", ""));  // no GPU, no host-wide verdict
}

TEST(PcieLinkTest, NicBelowItsSpeedFails) {
  Host host("spark-dual-rail", TwoRails());
  host.topology.devices = {PciDevice("rocep1s0f0", "0000:01:00.0", Link(8, 16, 16, 16))};
  const auto results = host.Evaluate();
  EXPECT_THAT(Find(results, "pcie_link", "rail0")->reason,
              HasSubstr("at 8 GT/s x16, can train at 16 GT/s x16"));
  EXPECT_FALSE(Find(results, "pcie_link", "rail1"));  // no PCI function known: no verdict
}

TEST(PcieLinkTest, AttainableLinkIsTheReference) {
  // A x16 card in a x8 slot: attainable x8, so x8 is no fault.
  Host host("spark-dual-rail", TwoRails());
  auto link = Link(32, 8, 32, 16);
  link.attainable_width = 8;
  host.topology.devices = {PciDevice("rocep1s0f0", "0000:01:00.0", link)};
  EXPECT_TRUE(Find(host.Evaluate(), "pcie_link", "rail0")->ok);
}

TEST(PcieLinkTest, IdleGpuAtLowSpeedIsNoFault) {
  Host host("spark-dual-rail", TwoRails());
  host.topology.gpus = {PcieGpu("0000:17:00.0", Link(2.5, 16, 32, 16))};
  const auto verdict = Find(host.Evaluate(), "pcie_link", "");
  ASSERT_TRUE(verdict);
  EXPECT_TRUE(verdict->ok) << verdict->reason;
}

TEST(PcieLinkTest, GpuBelowItsWidthFailsTheHostVerdict) {
  Host host("spark-dual-rail", TwoRails());
  host.topology.gpus = {PcieGpu("0000:17:00.0", Link(2.5, 16, 32, 16)),
                        PcieGpu("0000:65:00.0", Link(2.5, 4, 32, 16))};
  const auto verdict = Find(host.Evaluate(), "pcie_link", "");
  EXPECT_FALSE(verdict->ok);
  EXPECT_EQ(verdict->reason,
            "GPU (0000:65:00.0) at x4, can train at x16: reseat or check the slot/riser");
}

TEST(PcieLinkTest, GpuSpeedCountsOnlyFromACurrentGpuMemoryProbe) {
  Host host("spark-dual-rail", TwoRails());
  host.topology.gpus = {PcieGpu("0000:17:00.0", Link(2.5, 16, 32, 16))};
  auto& run = host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 1e9);
  run.memory = gpu::MemoryType::kCuda;
  run.gpu_pci_bus_id = "0000:17:00.0";
  run.gpu_link_speed_gts = 16;
  auto inputs = host.Inputs();
  auto verdict = *Find(EvaluateChecks(inputs), "pcie_link", "");
  EXPECT_FALSE(verdict.ok);
  EXPECT_THAT(verdict.reason, HasSubstr("GPU (0000:17:00.0) at 16 GT/s x16, can train at 32 GT/s"));

  inputs.is_current = [](const probe::SeriesState&) { return false; };  // stale: says nothing
  EXPECT_TRUE(Find(EvaluateChecks(inputs), "pcie_link", "")->ok);
}

TEST(PcieLinkTest, HostMemoryProbeSaysNothingAboutTheGpu) {
  Host host("spark-dual-rail", TwoRails());
  host.topology.gpus = {PcieGpu("0000:17:00.0", Link(2.5, 16, 32, 16))};
  auto& run = host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 1e9);
  run.gpu_pci_bus_id = "0000:17:00.0";
  run.gpu_link_speed_gts = 2.5;  // memory stays host
  EXPECT_TRUE(Find(host.Evaluate(), "pcie_link", "")->ok);
}

TEST(PcieLinkTest, C2cGpuHasNoPcieVerdict) {
  Host host("spark-dual-rail", TwoRails());
  auto gpu = PcieGpu("000f:01:00.0", Link(2.5, 1, 32, 16));
  gpu.attach = inventory::GpuAttach::kC2c;
  host.topology.gpus = {gpu};
  EXPECT_FALSE(Find(host.Evaluate(), "pcie_link", ""));
}

}  // namespace
}  // namespace rail::health::test
