// GPUDirect RDMA per GPU and mechanism, UCX's memory types, and the CUDA driver, as the probe
// worker found them (its hello: WorkerStatus::capabilities; the agent never loads CUDA). The NIC
// side of peer memory is read in this scrape (nvidia_peermem may be loaded at any time); dma-buf
// registration is what the worker probed. Nothing is published before a worker said hello.
#include <algorithm>
#include <iterator>

#include "collectors/families.h"
#include "collectors/registry.h"
#include "rail/gpu/gpudirect.h"

namespace rail::collectors {
namespace {

// The memory types probes move, always published (0 when UCX lacks them: a UCX built without
// CUDA stages GPU buffers through host memory); any other type UCX reports is published as 1.
constexpr const char* kProbedMemoryTypes[] = {"host", "cuda"};

// 12040 -> "12.4", as NVIDIA writes driver API versions.
std::string CudaVersionText(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

void AddGpuDirect(Scrape& scrape, const probe::WorkerCapabilities& capabilities,
                  std::vector<prometheus::MetricFamily>& out) {
  auto supported = detail::Gauge(
      "rail_gpu_direct_rdma_supported",
      "1 when the NICs can reach this GPU's memory by the mechanism (peer_memory: driver support "
      "and nv_mem or nvidia_peermem; dma_buf: driver support and every RDMA device registers "
      "dma-bufs); either one is enough for GPUDirect RDMA.");
  for (const gpu::CudaDevice& device : capabilities.cuda.devices) {
    const gpu::GpuDirectVerdict verdict =
        gpu::JudgeGpuDirect(device, scrape.PeerMemory(), capabilities.dma_buf);
    const char* peer_memory = gpu::GpuDirectMechanismName(gpu::GpuDirectMechanism::kPeerMemory);
    const char* dma_buf = gpu::GpuDirectMechanismName(gpu::GpuDirectMechanism::kDmaBuf);
    supported.Add({{"pci_bus_id", device.pci_bus_id}, {"mechanism", peer_memory}},
                  verdict.peer_memory ? 1 : 0);
    supported.Add({{"pci_bus_id", device.pci_bus_id}, {"mechanism", dma_buf}},
                  verdict.dma_buf ? 1 : 0);
  }
  supported.MoveTo(out);
}

void AddUcxMemoryTypes(const probe::WorkerCapabilities& capabilities,
                       std::vector<prometheus::MetricFamily>& out) {
  if (!capabilities.ucx_memory_types_known) return;
  auto types = detail::Gauge("rail_ucx_memory_type_supported",
                             "1 when the probe worker's UCX handles this memory type (UCS names: "
                             "host, cuda, cuda-managed, ...); cuda 0: GPU buffers are staged "
                             "through host memory.");
  const auto& known = capabilities.ucx_memory_types;
  auto has = [&known](const std::string& name) {
    return std::find(known.begin(), known.end(), name) != known.end();
  };
  for (const char* name : kProbedMemoryTypes) types.Add({{"memory", name}}, has(name) ? 1 : 0);
  for (const std::string& name : known) {
    if (std::find(std::begin(kProbedMemoryTypes), std::end(kProbedMemoryTypes), name) ==
        std::end(kProbedMemoryTypes)) {
      types.Add({{"memory", name}}, 1);
    }
  }
  types.MoveTo(out);
}

class GpuDirectCollector final : public Collector {
 public:
  std::string Name() const override { return "gpu_direct"; }
  std::string Help() const override {
    return "GPUDirect RDMA per GPU and mechanism, UCX memory types, the CUDA driver (from the "
           "probe worker)";
  }

  void Collect(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) override {
    if (!scrape.sources().probe_worker) return;
    const std::optional<probe::WorkerStatus> status = scrape.sources().probe_worker();
    if (!status || !status->capabilities) return;
    const probe::WorkerCapabilities& capabilities = *status->capabilities;
    detail::Gauge("rail_gpu_cuda_driver_info",
                  "The CUDA driver the probe worker loaded (version as 12.4; loaded false: no "
                  "driver, or it failed to initialise), always 1.")
        .Add({{"version", CudaVersionText(capabilities.cuda.driver_version)},
              {"loaded", capabilities.cuda.loaded ? "true" : "false"}},
             1)
        .MoveTo(out);
    AddGpuDirect(scrape, capabilities, out);
    AddUcxMemoryTypes(capabilities, out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeGpuDirectCollector() {
  return std::make_unique<GpuDirectCollector>();
}

}  // namespace rail::collectors
