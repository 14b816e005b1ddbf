// Where a UCX probe side's GPU memory goes: the GPU nearest the rail's RDMA device in the PCIe
// tree (the hgx-8gpu fixture), mapped to the CUDA ordinal the fake driver gives that PCI address,
// which is not the PCI order; CUDA device 0, said so, where the tree has no answer.
#include "probe/ucx/gpu_placement.h"

#include <gmock/gmock.h>

#include "rail/probe/in_process.h"
#include "support/fake_cuda.h"

namespace rail::probe {
namespace {

using rail::testing::FakeCuda;
using rail::testing::kFakeCudaLibrary;
using ::testing::HasSubstr;

class GpuPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kFakeCudaLibrary == nullptr) GTEST_SKIP() << rail::testing::kNoFakeCuda;
    // CUDA's order, fastest first, is not PCI order: mlx5_6's GPU (0000:c3:00.0) is ordinal 1.
    fake_ = std::make_unique<FakeCuda>(nlohmann::json{
        {"devices",
         {FakeCuda::Device("0000:17:00.0", "gpu a"), FakeCuda::Device("0000:c3:00.0", "gpu b")}}});
    ConfigureProbeGpu("/nonexistent", "/nonexistent/libcuda.so.1");  // drops a loaded driver
    ConfigureProbeGpu(std::string(RAIL_FIXTURES) + "/hgx-8gpu/sys", kFakeCudaLibrary);
  }
  void TearDown() override { ConfigureProbeGpu("/sys", "/nonexistent/libcuda.so.1"); }

  static ProbeRail Rail(const std::string& name, const std::string& rdma_device) {
    ProbeRail rail;
    rail.name = name;
    rail.rdma_device = rdma_device;
    return rail;
  }

  std::unique_ptr<FakeCuda> fake_;
};

TEST_F(GpuPlacementTest, TheGpuNearestTheRailsNicByItsPciAddress) {
  std::string error;
  const auto placement = detail::PlaceOnGpu(Rail("rail6", "mlx5_6"), &error);
  ASSERT_TRUE(placement) << error;
  EXPECT_EQ(placement->pci_bus_id, "0000:c3:00.0");
  EXPECT_EQ(placement->context->ordinal(), 1);
  EXPECT_TRUE(placement->note.empty()) << placement->note;
}

TEST_F(GpuPlacementTest, WithoutATopologyAnswerCudaDeviceZeroAndANote) {
  std::string error;
  const auto placement = detail::PlaceOnGpu(Rail("lab0", ""), &error);
  ASSERT_TRUE(placement) << error;
  EXPECT_EQ(placement->context->ordinal(), 0);
  EXPECT_EQ(placement->pci_bus_id, "0000:17:00.0");
  EXPECT_THAT(placement->note, HasSubstr("lab0: no PCIe topology answer"));
}

TEST_F(GpuPlacementTest, ANearestGpuCudaDoesNotShowFallsBackAndSaysSo) {
  // mlx5_0's nearest GPU is not among the fake's two devices (as with CUDA_VISIBLE_DEVICES).
  std::string error;
  const auto placement = detail::PlaceOnGpu(Rail("rail0", "mlx5_0"), &error);
  ASSERT_TRUE(placement) << error;
  EXPECT_EQ(placement->context->ordinal(), 0);
  EXPECT_THAT(placement->note, HasSubstr("is not visible to CUDA"));
}

TEST_F(GpuPlacementTest, TheLinkSpeedIsReadUnderTheConfiguredRoot) {
  // bus/pci/devices/0000:c3:00.0/current_link_speed: "32.0 GT/s PCIe".
  const std::optional<double> speed = detail::GpuLinkSpeed("0000:c3:00.0");
  ASSERT_TRUE(speed);
  EXPECT_DOUBLE_EQ(*speed, 32.0);
  EXPECT_EQ(detail::GpuLinkSpeed(""), std::nullopt);
}

}  // namespace
}  // namespace rail::probe
