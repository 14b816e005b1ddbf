#include "rail/gpu/gpudirect.h"

#include <gtest/gtest.h>

namespace rail::gpu {
namespace {

CudaDevice Gpu(bool gpu_direct_rdma, bool dma_buf) {
  CudaDevice gpu;
  gpu.pci_bus_id = "0000:17:00.0";
  gpu.gpu_direct_rdma = gpu_direct_rdma;
  gpu.dma_buf = dma_buf;
  return gpu;
}

sysfs::PeerMemoryState PeerMemory(bool nvidia_peermem, std::optional<std::string> nv_mem) {
  sysfs::PeerMemoryState state;
  state.nvidia_peermem_loaded = nvidia_peermem;
  state.nv_mem_version = std::move(nv_mem);
  return state;
}

const std::vector<DmaBufSupport> kNoDmaBuf = {{"mlx5_0", false, "Operation not supported"}};
const std::vector<DmaBufSupport> kDmaBuf = {{"mlx5_0", true, "Bad file descriptor"},
                                            {"mlx5_1", true, "Bad file descriptor"}};

TEST(GpuDirectTest, PeerMemoryAloneIsEnough) {
  GpuDirectVerdict verdict = JudgeGpuDirect(Gpu(true, true), PeerMemory(true, {}), kNoDmaBuf);
  EXPECT_EQ(verdict.pci_bus_id, "0000:17:00.0");
  EXPECT_TRUE(verdict.peer_memory);
  EXPECT_FALSE(verdict.dma_buf);
  EXPECT_TRUE(verdict.any());
  EXPECT_EQ(verdict.reason, "");
}

TEST(GpuDirectTest, NvMemCountsAsPeerMemory) {
  GpuDirectVerdict verdict =
      JudgeGpuDirect(Gpu(true, false), PeerMemory(false, "1.0-0"), kNoDmaBuf);
  EXPECT_TRUE(verdict.peer_memory);
}

TEST(GpuDirectTest, DmaBufAloneIsEnough) {
  GpuDirectVerdict verdict = JudgeGpuDirect(Gpu(true, true), PeerMemory(false, {}), kDmaBuf);
  EXPECT_FALSE(verdict.peer_memory);
  EXPECT_TRUE(verdict.dma_buf);
  EXPECT_EQ(verdict.reason, "");
}

TEST(GpuDirectTest, DmaBufNeedsEveryNic) {
  std::vector<DmaBufSupport> nics = kDmaBuf;
  nics.push_back({"mlx5_2", false, "Operation not supported"});
  GpuDirectVerdict verdict = JudgeGpuDirect(Gpu(true, true), PeerMemory(false, {}), nics);
  EXPECT_FALSE(verdict.dma_buf);
  EXPECT_NE(verdict.reason.find("mlx5_2 (Operation not supported)"), std::string::npos);
  EXPECT_EQ(verdict.reason.find("mlx5_0"), std::string::npos) << verdict.reason;
}

TEST(GpuDirectTest, NeitherNamesWhatIsMissing) {
  GpuDirectVerdict verdict = JudgeGpuDirect(Gpu(true, true), PeerMemory(false, {}), kNoDmaBuf);
  EXPECT_FALSE(verdict.any());
  EXPECT_EQ(verdict.reason,
            "no peer memory (nvidia_peermem not loaded, no nv_mem) and dma-buf unsupported by "
            "mlx5_0 (Operation not supported)");
}

TEST(GpuDirectTest, TheDriversAttributesGateBothMechanisms) {
  GpuDirectVerdict verdict = JudgeGpuDirect(Gpu(false, false), PeerMemory(true, "1.0"), kDmaBuf);
  EXPECT_FALSE(verdict.any());
  EXPECT_NE(verdict.reason.find("the driver reports no GPUDirect RDMA"), std::string::npos);
  EXPECT_NE(verdict.reason.find("the driver reports no dma-buf"), std::string::npos);
}

TEST(GpuDirectTest, MechanismNames) {
  EXPECT_STREQ(GpuDirectMechanismName(GpuDirectMechanism::kPeerMemory), "peer_memory");
  EXPECT_STREQ(GpuDirectMechanismName(GpuDirectMechanism::kDmaBuf), "dma_buf");
}

TEST(ProbeDmaBufTest, UnknownDeviceIsUnsupportedWithDetail) {
  auto results = ProbeDmaBuf({"rail_no_such_device0"});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].device, "rail_no_such_device0");
  EXPECT_FALSE(results[0].supported);
  EXPECT_EQ(results[0].detail, "no such RDMA device");
}

TEST(ProbeDmaBufTest, NoDevicesNoResults) {
  EXPECT_TRUE(ProbeDmaBuf({}).empty());
}

}  // namespace
}  // namespace rail::gpu
