// The worker's capabilities: their JSON, `--capabilities`, and the hello that carries them, with
// the fake CUDA driver; only the worker process ever initialises CUDA.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "rail/probe/worker.h"
#include "support/fake_cuda.h"

namespace rail::probe {
namespace {

using rail::testing::FakeCuda;
using rail::testing::kFakeCudaLibrary;

WorkerCapabilities Sample() {
  WorkerCapabilities capabilities;
  capabilities.cuda.loaded = true;
  capabilities.cuda.driver_version = 12040;
  gpu::CudaDevice device;
  device.ordinal = 1;
  device.pci_bus_id = "0000:17:00.0";
  device.name = "H100";
  device.gpu_direct_rdma = true;
  device.gpu_direct_rdma_with_vmm = true;
  capabilities.cuda.devices.push_back(device);
  capabilities.dma_buf.push_back({"mlx5_0", false, "Operation not supported"});
  capabilities.ucx_memory_types_known = true;
  capabilities.ucx_memory_types = {"host", "cuda"};
  return capabilities;
}

TEST(WorkerCapabilitiesTest, JsonRoundTrips) {
  const WorkerCapabilities back = CapabilitiesFromJson(CapabilitiesToJson(Sample()));
  EXPECT_TRUE(back.cuda.loaded);
  EXPECT_EQ(back.cuda.driver_version, 12040);
  ASSERT_EQ(back.cuda.devices.size(), 1u);
  EXPECT_EQ(back.cuda.devices[0].ordinal, 1);
  EXPECT_EQ(back.cuda.devices[0].pci_bus_id, "0000:17:00.0");
  EXPECT_EQ(back.cuda.devices[0].name, "H100");
  EXPECT_TRUE(back.cuda.devices[0].gpu_direct_rdma);
  EXPECT_FALSE(back.cuda.devices[0].dma_buf);
  EXPECT_TRUE(back.cuda.devices[0].gpu_direct_rdma_with_vmm);
  ASSERT_EQ(back.dma_buf.size(), 1u);
  EXPECT_EQ(back.dma_buf[0].device, "mlx5_0");
  EXPECT_FALSE(back.dma_buf[0].supported);
  EXPECT_EQ(back.dma_buf[0].detail, "Operation not supported");
  EXPECT_TRUE(back.ucx_memory_types_known);
  EXPECT_EQ(back.ucx_memory_types, (std::vector<std::string>{"host", "cuda"}));
}

TEST(WorkerCapabilitiesTest, FromJsonIsLenient) {
  const WorkerCapabilities empty = CapabilitiesFromJson(nlohmann::json::object());
  EXPECT_FALSE(empty.cuda.loaded);
  EXPECT_TRUE(empty.cuda.devices.empty());
  EXPECT_FALSE(empty.ucx_memory_types_known);
  const WorkerCapabilities odd = CapabilitiesFromJson(
      {{"cuda", {{"devices", "none"}}}, {"dma_buf", {1, 2}}, {"ucx_memory_types", {"host", 3}}});
  EXPECT_TRUE(odd.cuda.devices.empty());
  EXPECT_TRUE(odd.dma_buf.empty());
  EXPECT_EQ(odd.ucx_memory_types, std::vector<std::string>{"host"});
  EXPECT_FALSE(CapabilitiesFromJson(nullptr).cuda.loaded);
}

TEST(WorkerCapabilitiesTest, QueryWithoutADriverSaysWhy) {
  std::string error;
  auto capabilities = QueryWorkerCapabilities(RAIL_PROBE_WORKER, &error, "/nonexistent/libcuda.so");
  ASSERT_TRUE(capabilities.has_value()) << error;
  EXPECT_FALSE(capabilities->cuda.loaded);
  EXPECT_FALSE(capabilities->cuda.error.empty());
  // Every UCX knows host memory.
  EXPECT_TRUE(capabilities->ucx_memory_types_known);
  EXPECT_NE(std::find(capabilities->ucx_memory_types.begin(), capabilities->ucx_memory_types.end(),
                      "host"),
            capabilities->ucx_memory_types.end());
}

TEST(WorkerCapabilitiesTest, QueryOfAMissingWorkerFails) {
  std::string error;
  EXPECT_FALSE(QueryWorkerCapabilities("/nonexistent/rail_exporter_probe_worker", &error));
  EXPECT_FALSE(error.empty());
}

TEST(WorkerCapabilitiesTest, QueryReadsTheFakeDriverInTheWorkerOnly) {
  if (kFakeCudaLibrary == nullptr) GTEST_SKIP() << rail::testing::kNoFakeCuda;
  FakeCuda fake(nlohmann::json{{"driver_version", 12080},
                               {"devices", {FakeCuda::Device("0000:9A:00.0", "Fake")}}});
  std::string error;
  auto capabilities = QueryWorkerCapabilities(RAIL_PROBE_WORKER, &error, kFakeCudaLibrary);
  ASSERT_TRUE(capabilities.has_value()) << error;
  EXPECT_TRUE(capabilities->cuda.loaded) << capabilities->cuda.error;
  EXPECT_EQ(capabilities->cuda.driver_version, 12080);
  ASSERT_EQ(capabilities->cuda.devices.size(), 1u);
  EXPECT_EQ(capabilities->cuda.devices[0].pci_bus_id, "0000:9a:00.0");
  const std::vector<long> callers = fake.CallersOf("cuInit");
  ASSERT_EQ(callers.size(), 1u);
  EXPECT_NE(callers[0], static_cast<long>(getpid()));
}

TEST(WorkerCapabilitiesTest, HelloCarriesCapabilitiesFromAShortLivedCopyOfTheWorker) {
  if (kFakeCudaLibrary == nullptr) GTEST_SKIP() << rail::testing::kNoFakeCuda;
  FakeCuda fake(nlohmann::json{{"devices", {FakeCuda::Device("0000:17:00.0", "Fake H100")}}});
  // An RDMA device that the sysfs tree names but libibverbs does not know.
  const std::string sysfs = fake.dir() + "/sys";
  std::filesystem::create_directories(sysfs + "/class/infiniband/rail_fake0");
  WorkerOptions options;
  options.executable = RAIL_PROBE_WORKER;
  options.init.agent_version = "test";
  options.init.sysfs_root = sysfs;
  options.init.cuda_library = kFakeCudaLibrary;
  ProbeWorker worker(options);
  std::string error;
  ASSERT_TRUE(worker.Start(&error)) << error;
  const WorkerStatus status = worker.Status();
  ASSERT_TRUE(status.capabilities.has_value());
  EXPECT_TRUE(status.capabilities->cuda.loaded) << status.capabilities->cuda.error;
  ASSERT_EQ(status.capabilities->cuda.devices.size(), 1u);
  EXPECT_EQ(status.capabilities->cuda.devices[0].name, "Fake H100");
  ASSERT_EQ(status.capabilities->dma_buf.size(), 1u);
  EXPECT_EQ(status.capabilities->dma_buf[0].device, "rail_fake0");
  EXPECT_FALSE(status.capabilities->dma_buf[0].supported);
  // A copy of the worker initialised CUDA and is gone: neither this process nor the long-lived
  // worker holds the driver while no GPU-memory probe runs.
  const std::vector<long> callers = fake.CallersOf("cuInit");
  ASSERT_EQ(callers.size(), 1u);
  EXPECT_NE(callers[0], static_cast<long>(status.pid));
  EXPECT_NE(callers[0], static_cast<long>(getpid()));
  EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string(callers[0])));
  worker.Stop();
}

}  // namespace
}  // namespace rail::probe
