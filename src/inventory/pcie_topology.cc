#include "rail/inventory/pcie_topology.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>

namespace rail::inventory {
namespace {

// GPUs attached to a Grace CPU over NVLink-C2C rather than PCIe, by PCI device id. The one place
// this is decided from sysfs; the probe worker also knows it from CUDA's
// CU_DEVICE_ATTRIBUTE_INTEGRATED, which only a process holding the driver can ask.
constexpr std::array<std::uint32_t, 3> kC2cGpuDeviceIds = {
    0x2342,  // GH200
    0x2941,  // GB200
    0x2e12,  // GB10 (DGX Spark)
};

GpuAttach AttachOf(std::uint32_t device_id) {
  const bool c2c = std::find(kC2cGpuDeviceIds.begin(), kC2cGpuDeviceIds.end(), device_id) !=
                   kC2cGpuDeviceIds.end();
  return c2c ? GpuAttach::kC2c : GpuAttach::kPcie;
}

// "0000:01:00.0" and "0000:01:00.1": one device, two functions.
bool SameDevice(const std::string& a, const std::string& b) {
  const auto dot_a = a.rfind('.');
  const auto dot_b = b.rfind('.');
  return dot_a != std::string::npos && dot_a == dot_b && a.compare(0, dot_a, b, 0, dot_b) == 0;
}

// Switch upstream ports in chain[from, size-1): after the root port (index 0) bridges come in
// upstream/downstream pairs, so upstream ports sit at odd indices; the last entry is the function
// itself.
std::size_t SwitchesBelow(const std::vector<std::string>& chain, std::size_t from) {
  std::size_t switches = 0;
  for (std::size_t i = from; i + 1 < chain.size(); ++i) {
    if (i % 2 == 1) ++switches;
  }
  return switches;
}

std::optional<double> MinOf(std::optional<double> a, std::optional<double> b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}
std::optional<unsigned> MinOf(std::optional<unsigned> a, std::optional<unsigned> b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

// The function's link against its upstream port's (chain[size-2], a root port or a switch
// downstream port): the port's maximum bounds what the function can train at.
PciLinkState LinkStateOf(const sysfs::Filesystem& fs, const sysfs::PciFunction& function,
                         sysfs::ReadErrors& errors) {
  PciLinkState state;
  state.link = function.link;
  state.attainable_speed_gts = function.link.max_speed_gts;
  state.attainable_width = function.link.max_width;
  if (function.chain.size() < 2) return state;
  const sysfs::PciLink upstream =
      sysfs::ReadPciLink(fs, function.chain[function.chain.size() - 2], errors);
  state.attainable_speed_gts = MinOf(function.link.max_speed_gts, upstream.max_speed_gts);
  state.attainable_width = MinOf(function.link.max_width, upstream.max_width);
  return state;
}

bool IsGpu(std::uint32_t vendor, std::uint32_t class_code) {
  return vendor == sysfs::kPciVendorNvidia && sysfs::IsDisplayClass(class_code);
}

}  // namespace

const char* PciPathName(PciPath path) {
  switch (path) {
    case PciPath::kPix:
      return "PIX";
    case PciPath::kPxb:
      return "PXB";
    case PciPath::kPhb:
      return "PHB";
    case PciPath::kNode:
      return "NODE";
    case PciPath::kSys:
      return "SYS";
  }
  return "SYS";
}

std::optional<PciPath> ParsePciPath(const std::string& name) {
  for (const PciPath path :
       {PciPath::kPix, PciPath::kPxb, PciPath::kPhb, PciPath::kNode, PciPath::kSys}) {
    if (name == PciPathName(path)) return path;
  }
  return std::nullopt;
}

const char* GpuAttachName(GpuAttach attach) {
  return attach == GpuAttach::kC2c ? "c2c" : "pcie";
}

PciPath PathBetween(const sysfs::PciFunction& a, const sysfs::PciFunction& b) {
  if (SameDevice(a.address, b.address)) return PciPath::kPix;
  if (a.root_complex.empty() || a.root_complex != b.root_complex) {
    const bool other_node = a.numa_node && b.numa_node && *a.numa_node != *b.numa_node;
    return other_node ? PciPath::kSys : PciPath::kNode;
  }
  std::size_t shared = 0;
  while (shared < a.chain.size() && shared < b.chain.size() && a.chain[shared] == b.chain[shared]) {
    ++shared;
  }
  // Meeting at the host bridge, or at one root port (index 0) that leads to both.
  if (shared <= 1) return PciPath::kPhb;
  // Meeting at a switch's upstream port (odd index): the path crosses that switch too.
  const std::size_t meeting_switch = (shared - 1) % 2 == 1 ? 1 : 0;
  const std::size_t switches =
      meeting_switch + SwitchesBelow(a.chain, shared) + SwitchesBelow(b.chain, shared);
  return switches <= 1 ? PciPath::kPix : PciPath::kPxb;
}

PcieTopology ReadPcieTopology(const sysfs::Filesystem& fs,
                              const std::vector<sysfs::InfinibandDevice>& devices,
                              sysfs::ReadErrors& errors) {
  PcieTopology topology;
  const auto gpu_functions = sysfs::ReadPciFunctions(fs, errors, IsGpu, sysfs::kPciVendorNvidia);
  for (const auto& function : gpu_functions) {
    Gpu gpu;
    gpu.pci_bus_id = function.address;
    gpu.numa_node = function.numa_node;
    gpu.device_id = function.device_id.value_or(0);
    gpu.attach = AttachOf(gpu.device_id);
    gpu.link = LinkStateOf(fs, function, errors);
    topology.gpus.push_back(std::move(gpu));
  }

  std::map<std::string, sysfs::PciFunction> device_functions;  // by device name
  for (const auto& device : devices) {
    const auto address = sysfs::InfinibandPciAddress(fs, device.name);
    if (!address) continue;
    auto function = sysfs::ReadPciFunction(fs, *address, errors);
    if (!function) continue;
    RdmaPciDevice rdma;
    rdma.device = device.name;
    rdma.pci_bus_id = *address;
    rdma.numa_node = function->numa_node;
    rdma.link = LinkStateOf(fs, *function, errors);
    topology.devices.push_back(std::move(rdma));
    device_functions.emplace(device.name, std::move(*function));
  }
  std::sort(topology.devices.begin(), topology.devices.end(),
            [](const auto& x, const auto& y) { return x.device < y.device; });

  for (const auto& gpu : gpu_functions) {
    for (const auto& rdma : topology.devices) {
      topology.paths.push_back(
          {gpu.address, rdma.device, PathBetween(gpu, device_functions.at(rdma.device))});
    }
  }
  return topology;
}

const GpuNicPath* FindPath(const PcieTopology& topology, const std::string& pci_bus_id,
                           const std::string& device) {
  for (const auto& path : topology.paths) {
    if (path.pci_bus_id == pci_bus_id && path.device == device) return &path;
  }
  return nullptr;
}

const Gpu* NearestGpu(const PcieTopology& topology, const std::string& device) {
  const Gpu* nearest = nullptr;
  PciPath best = PciPath::kSys;
  for (const auto& gpu : topology.gpus) {  // by PCI address: the first of equals wins
    const GpuNicPath* path = FindPath(topology, gpu.pci_bus_id, device);
    if (path == nullptr) continue;
    if (nearest == nullptr || path->path < best) {
      nearest = &gpu;
      best = path->path;
    }
  }
  return nearest;
}

const RdmaPciDevice* FindRdmaDevice(const PcieTopology& topology, const std::string& device) {
  for (const auto& rdma : topology.devices) {
    if (rdma.device == device) return &rdma;
  }
  return nullptr;
}

const RdmaPciDevice* NearestDevice(const PcieTopology& topology, const std::string& pci_bus_id) {
  const RdmaPciDevice* nearest = nullptr;
  PciPath best = PciPath::kSys;
  for (const auto& device : topology.devices) {  // by name: the first of equals wins
    const GpuNicPath* path = FindPath(topology, pci_bus_id, device.device);
    if (path == nullptr) continue;
    if (nearest == nullptr || path->path < best) {
      nearest = &device;
      best = path->path;
    }
  }
  return nearest;
}

}  // namespace rail::inventory
