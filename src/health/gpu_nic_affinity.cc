// gpu_nic_affinity: GPUDirect RDMA is only as good as the PCIe path between a GPU and its NIC.
// NCCL uses it by default up to PXB (through PCIe switches, never the CPU); beyond that the
// traffic crosses the host bridge or the socket link. Judged for discrete GPUs only (an
// integrated or C2C-attached GPU has no PCIe path to a NIC): every rail by its nearest GPU, and
// the GPUs together (one host-wide verdict, rail "") by each one's nearest RDMA device, against
// Thresholds::gpu_nic_max_path.
#include <spdlog/fmt/fmt.h>

#include <map>

#include "health/check_helpers.h"

namespace rail::health::detail {
namespace {

// The nearest path from each discrete GPU to any RDMA device, and from each RDMA device to any
// discrete GPU (the topology's paths, restricted to discrete GPUs).
struct Nearest {
  std::map<std::string, const inventory::GpuNicPath*> by_gpu;
  std::map<std::string, const inventory::GpuNicPath*> by_device;
};

void KeepNearer(const inventory::GpuNicPath*& slot, const inventory::GpuNicPath& path) {
  if (slot == nullptr || path.path < slot->path) slot = &path;
}

Nearest FindNearest(const HealthInputs& inputs) {
  const auto& topology = Topology(inputs);
  std::map<std::string, bool> discrete;
  for (const auto& gpu : topology.gpus) discrete[gpu.pci_bus_id] = IsDiscrete(inputs, gpu);
  Nearest nearest;
  // paths is GPU-major and by PCI address, so the first of equals is the lowest address.
  for (const auto& path : topology.paths) {
    if (!discrete[path.pci_bus_id]) continue;
    KeepNearer(nearest.by_gpu[path.pci_bus_id], path);
    KeepNearer(nearest.by_device[path.device], path);
  }
  return nearest;
}

const char* Crossing(inventory::PciPath path) {
  switch (path) {
    case inventory::PciPath::kSys:
      return "the inter-socket link";
    case inventory::PciPath::kNode:
      return "two root complexes";
    default:
      return "the CPU's host bridge";
  }
}

std::string Beyond(const HealthInputs& inputs, const inventory::GpuNicPath& path) {
  if (path.path <= inputs.thresholds.gpu_nic_max_path) return "";
  return fmt::format(
      "GPU {} and {} are {} apart (beyond {}): GPUDirect RDMA between them crosses {}",
      path.pci_bus_id, path.device, inventory::PciPathName(path.path),
      inventory::PciPathName(inputs.thresholds.gpu_nic_max_path), Crossing(path.path));
}

}  // namespace

void CheckGpuNicAffinity(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  const auto nearest = FindNearest(inputs);
  if (nearest.by_gpu.empty()) return;  // no discrete GPU with a path to an RDMA device
  for (const auto& rail : Rails(inputs)) {
    const auto found = nearest.by_device.find(rail.device);
    if (found == nearest.by_device.end()) continue;
    out.push_back(Verdict("gpu_nic_affinity", rail.name, "", Beyond(inputs, *found->second)));
  }
  std::vector<std::string> far;
  for (const auto& [gpu, path] : nearest.by_gpu) {
    if (auto reason = Beyond(inputs, *path); !reason.empty()) far.push_back(std::move(reason));
  }
  out.push_back(Verdict("gpu_nic_affinity", "", "", Join(far, "; ")));
}

}  // namespace rail::health::detail
