// gpu_direct: one host-wide verdict from the worker's capabilities (the driver's attributes, the
// NICs' dma-buf answers, UCX's memory types) and the kernel's peer memory state.
#include <gmock/gmock.h>

#include <memory>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;

gpu::CudaDevice Device(std::string pci_bus_id, bool gpu_direct_rdma, bool integrated = false) {
  gpu::CudaDevice device;
  device.pci_bus_id = std::move(pci_bus_id);
  device.name = "NVIDIA H100 80GB HBM3";
  device.gpu_direct_rdma = gpu_direct_rdma;
  device.integrated = integrated;
  return device;
}

// A host with one RDMA rail and a worker that loaded the driver and a CUDA-enabled UCX.
std::unique_ptr<Host> HostWith(std::vector<gpu::CudaDevice> devices) {
  HostConfig config;
  config.rails = {DeviceRail("rail0", "rocep1s0f0")};
  auto host = std::make_unique<Host>("spark-dual-rail", config);
  host->capabilities.emplace();
  host->capabilities->cuda.loaded = true;
  host->capabilities->cuda.driver_version = 12040;
  host->capabilities->cuda.devices = std::move(devices);
  host->capabilities->ucx_memory_types_known = true;
  host->capabilities->ucx_memory_types = {"host", "cuda", "cuda-managed"};
  return host;
}

TEST(GpuDirectTest, PeerMemoryAndTheDriverPass) {
  auto host = HostWith({Device("0000:17:00.0", true)});
  host->peer_memory.nvidia_peermem_loaded = true;
  const auto verdict = Find(host->Evaluate(), "gpu_direct", "");
  ASSERT_TRUE(verdict);
  EXPECT_TRUE(verdict->ok) << verdict->reason;
}

TEST(GpuDirectTest, NoMechanismFailsAndSaysWhyPerGpu) {
  auto host = HostWith({Device("0000:17:00.0", true), Device("0000:65:00.0", true)});
  const auto verdict = Find(host->Evaluate(), "gpu_direct", "");  // nvidia_peermem not loaded
  EXPECT_FALSE(verdict->ok);
  EXPECT_THAT(verdict->reason, HasSubstr("no GPUDirect RDMA mechanism works (GPU 0000:17:00.0: "));
  EXPECT_THAT(verdict->reason, HasSubstr("; GPU 0000:65:00.0: "));
}

TEST(GpuDirectTest, OneWorkingGpuIsEnough) {
  auto host = HostWith({Device("0000:17:00.0", false), Device("0000:65:00.0", true)});
  host->peer_memory.nv_mem_version = "1.0";
  EXPECT_TRUE(Find(host->Evaluate(), "gpu_direct", "")->ok);
}

TEST(GpuDirectTest, UcxWithoutCudaFails) {
  auto host = HostWith({Device("0000:17:00.0", true)});
  host->peer_memory.nvidia_peermem_loaded = true;
  host->capabilities->ucx_memory_types = {"host"};
  const auto verdict = Find(host->Evaluate(), "gpu_direct", "");
  EXPECT_FALSE(verdict->ok);
  EXPECT_EQ(verdict->reason,
            "UCX has no CUDA memory support (memory types: host): GPU buffers are staged through "
            "host memory");
}

TEST(GpuDirectTest, IntegratedGpuNeedsNoGpuDirectNorCudaUcx) {
  auto host = HostWith({Device("000f:01:00.0", false, /*integrated=*/true)});
  host->capabilities->ucx_memory_types = {"host"};
  const auto verdict = Find(host->Evaluate(), "gpu_direct", "");
  ASSERT_TRUE(verdict);
  EXPECT_TRUE(verdict->ok) << verdict->reason;
}

TEST(GpuDirectTest, NothingSaidWhileCapabilitiesAreUnknown) {
  auto host = HostWith({Device("0000:17:00.0", false)});
  host->capabilities.reset();
  EXPECT_EQ(Count(host->Evaluate(), "gpu_direct"), 0u);
}

TEST(GpuDirectTest, NoGpuNoVerdict) {
  auto host = HostWith({});
  EXPECT_EQ(Count(host->Evaluate(), "gpu_direct"), 0u);
}

TEST(GpuDirectTest, DriverThatDidNotLoadFailsWhenSysfsShowsGpus) {
  auto host = HostWith({});
  host->capabilities->cuda.loaded = false;
  host->capabilities->cuda.error = "libcuda.so.1: cannot open shared object file";
  EXPECT_EQ(Count(host->Evaluate(), "gpu_direct"), 0u);  // no GPU in the topology either
  host->topology.gpus = {PcieGpu("0000:17:00.0", Link(32, 16, 32, 16))};
  const auto verdict = Find(host->Evaluate(), "gpu_direct", "");
  EXPECT_FALSE(verdict->ok);
  EXPECT_THAT(verdict->reason, HasSubstr("could not load the CUDA driver (libcuda.so.1: cannot"));
}

}  // namespace
}  // namespace rail::health::test
