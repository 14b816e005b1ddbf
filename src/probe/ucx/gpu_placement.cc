#include "probe/ucx/gpu_placement.h"

#include <map>
#include <memory>
#include <mutex>

#include "rail/gpu/driver.h"
#include "rail/inventory/pcie_topology.h"
#include "rail/probe/in_process.h"
#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/infiniband.h"
#include "rail/sysfs/pci.h"
#include "rail/sysfs/read_errors.h"

namespace rail::probe {
namespace {

// The process's CUDA state. The driver stays loaded and the contexts retained until the process
// ends: loading again per probe would repeat cuInit's seconds-long start on real hosts.
struct GpuState {
  std::mutex mutex;
  std::string sysfs_root = "/sys";
  std::string cuda_library = gpu::kCudaLibrary;
  bool load_tried = false;
  std::string load_error;
  std::unique_ptr<gpu::CudaDriver> driver;
  std::map<int, std::unique_ptr<gpu::DeviceContext>> contexts;  // by ordinal
};

GpuState& State() {
  static GpuState* state = new GpuState();  // never destroyed: probe threads may outlive main
  return *state;
}

// Loads the driver the first time; the later calls answer what the first found.
const gpu::CudaDriver* Driver(GpuState& state, std::string* error) {
  if (!state.load_tried) {
    state.load_tried = true;
    state.driver = gpu::CudaDriver::Load(state.cuda_library, &state.load_error);
  }
  if (!state.driver) *error = "CUDA driver " + state.cuda_library + ": " + state.load_error;
  return state.driver.get();
}

// The PCI address of the GPU nearest the rail's RDMA device, or "" when the tree has no answer.
std::string NearestGpuAddress(const std::string& sysfs_root, const ProbeRail& rail) {
  if (rail.rdma_device.empty()) return {};
  const sysfs::RootedFilesystem fs(sysfs_root);
  sysfs::ReadErrors errors;
  sysfs::InfinibandReadOptions options;
  options.device_filter = [&](const std::string& device) { return device == rail.rdma_device; };
  const auto devices = sysfs::ReadInfiniband(fs, options, errors);
  const inventory::PcieTopology topology = inventory::ReadPcieTopology(fs, devices, errors);
  const inventory::Gpu* nearest = inventory::NearestGpu(topology, rail.rdma_device);
  return nearest != nullptr ? nearest->pci_bus_id : std::string();
}

std::string PciAddressOf(const gpu::CudaDriver& driver, int ordinal) {
  std::string error;
  for (const gpu::CudaDevice& device : driver.Devices(&error)) {
    if (device.ordinal == ordinal) return device.pci_bus_id;
  }
  return {};
}

}  // namespace

void ConfigureProbeGpu(const std::string& sysfs_root, const std::string& cuda_library) {
  GpuState& state = State();
  const std::lock_guard lock(state.mutex);
  state.sysfs_root = sysfs_root;
  const std::string library = cuda_library.empty() ? gpu::kCudaLibrary : cuda_library;
  if (library == state.cuda_library) return;
  // Another library (tests switch between the fake and a missing one; the worker configures
  // once, before any probe): the next probe loads it. No side may hold a context then.
  state.cuda_library = library;
  state.contexts.clear();
  state.driver.reset();
  state.load_tried = false;
  state.load_error.clear();
}

namespace detail {

std::optional<GpuPlacement> PlaceOnGpu(const ProbeRail& rail, std::string* error) {
  GpuState& state = State();
  const std::lock_guard lock(state.mutex);
  const gpu::CudaDriver* driver = Driver(state, error);
  if (driver == nullptr) return std::nullopt;
  GpuPlacement placement;
  placement.pci_bus_id = NearestGpuAddress(state.sysfs_root, rail);
  std::optional<int> ordinal;
  if (!placement.pci_bus_id.empty()) ordinal = driver->OrdinalOf(placement.pci_bus_id);
  if (!ordinal) {
    placement.note = rail.name + ": " +
                     (placement.pci_bus_id.empty()
                          ? std::string("no PCIe topology answer for its GPU")
                          : "its nearest GPU " + placement.pci_bus_id + " is not visible to CUDA") +
                     ", CUDA device 0 used";
    ordinal = 0;
    placement.pci_bus_id = PciAddressOf(*driver, 0);
  }
  auto& context = state.contexts[*ordinal];
  if (!context) {
    std::string why;
    context = gpu::DeviceContext::Open(*driver, *ordinal, &why);
    if (!context) {
      state.contexts.erase(*ordinal);
      *error = "CUDA device " + std::to_string(*ordinal) + ": " + why;
      return std::nullopt;
    }
  }
  placement.context = context.get();
  return placement;
}

std::optional<double> GpuLinkSpeed(const std::string& pci_bus_id) {
  if (pci_bus_id.empty()) return std::nullopt;
  std::string root;
  {
    GpuState& state = State();
    const std::lock_guard lock(state.mutex);
    root = state.sysfs_root;
  }
  const sysfs::RootedFilesystem fs(root);
  sysfs::ReadErrors errors;
  const auto function = sysfs::ReadPciFunction(fs, pci_bus_id, errors);
  return function ? function->link.current_speed_gts : std::nullopt;
}

}  // namespace detail
}  // namespace rail::probe
