// The gpu_direct collector with a hand-made WorkerStatus and peer memory in a fake sysfs.
#include <gtest/gtest.h>

#include "rail/collectors/collector_set.h"
#include "support/fake_filesystem.h"
#include "support/scrape.h"

namespace rail::collectors {
namespace {

using test::Sample;
using test::SampleCount;

probe::WorkerCapabilities Capabilities() {
  probe::WorkerCapabilities capabilities;
  capabilities.cuda.loaded = true;
  capabilities.cuda.driver_version = 12040;
  gpu::CudaDevice h100;
  h100.pci_bus_id = "0000:17:00.0";
  h100.gpu_direct_rdma = true;
  h100.dma_buf = true;
  gpu::CudaDevice no_dma_buf = h100;
  no_dma_buf.pci_bus_id = "0000:4a:00.0";
  no_dma_buf.dma_buf = false;
  capabilities.cuda.devices = {h100, no_dma_buf};
  capabilities.dma_buf = {{"mlx5_0", true, "Bad file descriptor"}};
  capabilities.ucx_memory_types_known = true;
  capabilities.ucx_memory_types = {"host", "cuda-managed"};
  return capabilities;
}

class GpuDirectCollectorTest : public ::testing::Test {
 protected:
  GpuDirectCollectorTest() {
    sources_.inventory.sys = &sys_;
    sources_.inventory.proc = &proc_;
    sources_.probe_worker = [this]() { return status_; };
    set_ = std::make_unique<CollectorSet>(sources_, std::vector<std::string>{"gpu_direct"});
  }

  void Hello(probe::WorkerCapabilities capabilities) {
    probe::WorkerStatus status;
    status.state = probe::WorkerState::kRunning;
    status.capabilities = std::move(capabilities);
    status_ = std::move(status);
  }

  test::FakeFilesystem sys_;
  test::FakeFilesystem proc_;
  std::optional<probe::WorkerStatus> status_;
  Sources sources_;
  std::unique_ptr<CollectorSet> set_;
};

TEST_F(GpuDirectCollectorTest, NothingBeforeTheWorkersHello) {
  auto families = set_->Collect();
  EXPECT_EQ(SampleCount(families, "rail_gpu_cuda_driver_info"), 0u);
  probe::WorkerStatus starting;  // running, but no capabilities yet
  status_ = starting;
  families = set_->Collect();
  EXPECT_EQ(SampleCount(families, "rail_gpu_cuda_driver_info"), 0u);
  EXPECT_EQ(SampleCount(families, "rail_gpu_direct_rdma_supported"), 0u);
  EXPECT_EQ(SampleCount(families, "rail_ucx_memory_type_supported"), 0u);
}

TEST_F(GpuDirectCollectorTest, DmaBufWithoutPeerMemory) {
  Hello(Capabilities());
  const auto families = set_->Collect();
  EXPECT_EQ(
      Sample(families, "rail_gpu_cuda_driver_info", {{"version", "12.4"}, {"loaded", "true"}}), 1);
  EXPECT_EQ(Sample(families, "rail_gpu_direct_rdma_supported",
                   {{"pci_bus_id", "0000:17:00.0"}, {"mechanism", "dma_buf"}}),
            1);
  EXPECT_EQ(Sample(families, "rail_gpu_direct_rdma_supported",
                   {{"pci_bus_id", "0000:17:00.0"}, {"mechanism", "peer_memory"}}),
            0);
  EXPECT_EQ(Sample(families, "rail_gpu_direct_rdma_supported",
                   {{"pci_bus_id", "0000:4a:00.0"}, {"mechanism", "dma_buf"}}),
            0);
  EXPECT_EQ(SampleCount(families, "rail_gpu_direct_rdma_supported"), 4u);
}

TEST_F(GpuDirectCollectorTest, PeerMemoryComesFromThisScrapesSysfs) {
  sys_.AddDirectory("module/nvidia_peermem");
  Hello(Capabilities());
  const auto families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_gpu_direct_rdma_supported",
                   {{"pci_bus_id", "0000:4a:00.0"}, {"mechanism", "peer_memory"}}),
            1);
}

TEST_F(GpuDirectCollectorTest, UcxMemoryTypes) {
  Hello(Capabilities());
  const auto families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_ucx_memory_type_supported", {{"memory", "host"}}), 1);
  EXPECT_EQ(Sample(families, "rail_ucx_memory_type_supported", {{"memory", "cuda"}}), 0);
  EXPECT_EQ(Sample(families, "rail_ucx_memory_type_supported", {{"memory", "cuda-managed"}}), 1);
  EXPECT_EQ(SampleCount(families, "rail_ucx_memory_type_supported"), 3u);
}

TEST_F(GpuDirectCollectorTest, NoDriverIsReportedNotLoaded) {
  probe::WorkerCapabilities capabilities;
  capabilities.cuda.error = "libcuda.so.1: cannot open shared object file";
  Hello(capabilities);
  const auto families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_gpu_cuda_driver_info", {{"version", ""}, {"loaded", "false"}}),
            1);
  EXPECT_EQ(SampleCount(families, "rail_gpu_direct_rdma_supported"), 0u);
  EXPECT_EQ(SampleCount(families, "rail_ucx_memory_type_supported"), 0u);
}

}  // namespace
}  // namespace rail::collectors
