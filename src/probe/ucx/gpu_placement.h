// Where a UCX probe side's GPU buffers live: the CUDA driver, loaded once per process and only
// when a probe or handler first asks for memory other than host (the agent never loads it: it
// runs no UCX side), and the GPU nearest each rail's RDMA device.
#pragma once

#include <optional>
#include <string>

#include "rail/gpu/memory.h"
#include "rail/probe/result.h"

namespace rail::probe::detail {

// The GPU one side allocates on.
struct GpuPlacement {
  // Owned by the process (the primary context stays retained until it exits); shared by every
  // side on that GPU. Each call makes it current on the calling thread.
  gpu::DeviceContext* context = nullptr;
  std::string pci_bus_id;  // as sysfs and cuDeviceGetPCIBusId name it
  // For the result message when the choice was not the topology's: "rail0: no PCIe topology
  // answer for its RDMA device, CUDA device 0".
  std::string note;
};

// The GPU nearest `rail` (inventory::NearestGpu of its RDMA device under the configured sysfs
// root, mapped to a CUDA ordinal with CudaDriver::OrdinalOf); CUDA device 0, and a note saying
// so, when the topology has no answer (netdev-only rails, GPUs CUDA does not show). nullopt and
// `error` (the driver's message) when the driver cannot be loaded or the device not opened.
std::optional<GpuPlacement> PlaceOnGpu(const ProbeRail& rail, std::string* error);

// current_link_speed of a GPU's PCI function under the configured sysfs root, in GT/s.
std::optional<double> GpuLinkSpeed(const std::string& pci_bus_id);

}  // namespace rail::probe::detail
