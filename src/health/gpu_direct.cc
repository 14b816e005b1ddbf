// gpu_direct: a host with discrete GPUs and RDMA rails where no GPU has a working GPUDirect RDMA
// mechanism (gpu::JudgeGpuDirect, the one verdict), or whose UCX has no CUDA memory support: GPU
// buffers then cross host memory and get a fraction of the rail. One host-wide verdict (rail "").
// Integrated GPUs have no GPUDirect RDMA at all (pinned host memory is their fast path): they
// count as fine, and a UCX without CUDA support is no fault on a host that has only those. Nothing
// is said while the worker's capabilities are unknown.
#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "health/check_helpers.h"
#include "rail/gpu/gpudirect.h"

namespace rail::health::detail {
namespace {

bool HasRdmaRail(const HealthInputs& inputs) {
  return std::any_of(Rails(inputs).begin(), Rails(inputs).end(), [](const inventory::Rail& rail) {
    return rail.present && rail.transport == inventory::TransportClass::kRdma;
  });
}

// Discrete GPUs as the driver shows them; those the topology calls C2C-attached are left out.
std::vector<const gpu::CudaDevice*> DiscreteDevices(const HealthInputs& inputs) {
  std::vector<const gpu::CudaDevice*> discrete;
  for (const auto& device : inputs.capabilities->cuda.devices) {
    const auto& gpus = Topology(inputs).gpus;
    const auto found = std::find_if(gpus.begin(), gpus.end(), [&](const inventory::Gpu& gpu) {
      return gpu.pci_bus_id == device.pci_bus_id;
    });
    if (gpu::IsIntegrated(found != gpus.end() ? &*found : nullptr, &device)) continue;
    discrete.push_back(&device);
  }
  return discrete;
}

std::string MechanismReason(const HealthInputs& inputs) {
  static const sysfs::PeerMemoryState kNoPeerMemory;
  const auto& peer_memory = inputs.peer_memory ? *inputs.peer_memory : kNoPeerMemory;
  std::vector<std::string> reasons;
  for (const auto* device : DiscreteDevices(inputs)) {
    const auto verdict = gpu::JudgeGpuDirect(*device, peer_memory, inputs.capabilities->dma_buf);
    if (verdict.any()) return "";  // one working GPU is enough for the rails
    reasons.push_back(fmt::format("GPU {}: {}", device->pci_bus_id, verdict.reason));
  }
  return "no GPUDirect RDMA mechanism works (" + Join(reasons, "; ") + ")";
}

std::string UcxReason(const HealthInputs& inputs) {
  const auto& capabilities = *inputs.capabilities;
  if (!capabilities.ucx_memory_types_known) return "";
  const auto& types = capabilities.ucx_memory_types;
  if (std::find(types.begin(), types.end(), "cuda") != types.end()) return "";
  return fmt::format(
      "UCX has no CUDA memory support (memory types: {}): GPU buffers are staged through host "
      "memory",
      types.empty() ? std::string("none") : Join(types));
}

}  // namespace

void CheckGpuDirect(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  if (inputs.capabilities == nullptr || !HasRdmaRail(inputs)) return;
  const auto& cuda = inputs.capabilities->cuda;
  const auto& gpus = Topology(inputs).gpus;
  const bool pcie_gpus = std::any_of(gpus.begin(), gpus.end(), [](const inventory::Gpu& gpu) {
    return gpu.attach == inventory::GpuAttach::kPcie;
  });
  if (!cuda.loaded && pcie_gpus) {
    out.push_back(Verdict("gpu_direct", "", "",
                          fmt::format("the probe worker could not load the CUDA driver ({}): GPU "
                                      "memory cannot be probed",
                                      cuda.error)));
    return;
  }
  if (cuda.devices.empty()) return;  // no GPU: nothing to move GPU memory over the rails
  // Integrated GPUs alone need neither: their fast path is pinned host memory, which UCX moves
  // as host memory.
  if (DiscreteDevices(inputs).empty()) {
    out.push_back(Verdict("gpu_direct", "", "", ""));
    return;
  }
  std::vector<std::string> reasons;
  if (auto reason = MechanismReason(inputs); !reason.empty()) reasons.push_back(std::move(reason));
  if (auto reason = UcxReason(inputs); !reason.empty()) reasons.push_back(std::move(reason));
  out.push_back(Verdict("gpu_direct", "", "", Join(reasons, "; ")));
}

}  // namespace rail::health::detail
