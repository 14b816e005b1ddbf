// PCI functions under bus/pci/devices/ and where they sit in the PCIe tree: the attributes the GPU
// memory path depends on (vendor, class, NUMA node, link speed and width), parsed, never judged.
// The tree is read from where bus/pci/devices/<address> resolves
// (devices/pci0000:00/0000:00:01.0/0000:01:00.0): the root complex, then every bridge down to the
// function itself.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/read_errors.h"

namespace rail::sysfs {

// One PCIe link's state as the kernel reports it. Speeds are in GT/s ("16.0 GT/s PCIe" -> 16.0;
// "Unknown" -> nullopt).
struct PciLink {
  std::optional<double> current_speed_gts;  // current_link_speed
  std::optional<double> max_speed_gts;      // max_link_speed
  std::optional<unsigned> current_width;    // current_link_width
  std::optional<unsigned> max_width;        // max_link_width
};

struct PciFunction {
  std::string address;  // "0000:01:00.0", as named in bus/pci/devices/
  // The root complex directory the function resolves under ("pci0000:00"), and the PCI
  // functions from the root port down to this one, this one last.
  std::string root_complex;
  std::vector<std::string> chain;
  std::optional<std::uint32_t> vendor;      // vendor ("0x10de")
  std::optional<std::uint32_t> device_id;   // device
  std::optional<std::uint32_t> class_code;  // class ("0x030200": 3D controller)
  std::optional<int> numa_node;             // numa_node; -1 (no affinity) reads as nullopt
  PciLink link;
};

inline constexpr std::uint32_t kPciVendorNvidia = 0x10de;
inline constexpr std::uint32_t kPciVendorMellanox = 0x15b3;

// Whether the class code is a display controller (VGA 0x0300xx or 3D 0x0302xx).
bool IsDisplayClass(std::uint32_t class_code);

// One function: bus/pci/devices/<address>/{vendor,device,class,numa_node,*_link_*} and the
// resolved link of bus/pci/devices/<address>. nullopt when the function does not exist.
std::optional<PciFunction> ReadPciFunction(const Filesystem& fs, const std::string& address,
                                           ReadErrors& errors);

// The link attributes alone of bus/pci/devices/<address> (a bridge upstream of a device); all
// nullopt when the function does not exist.
PciLink ReadPciLink(const Filesystem& fs, const std::string& address, ReadErrors& errors);

// Every function under bus/pci/devices/ whose vendor and class `want` accepts (read first: the
// other attributes are read only for accepted functions). With `only_vendor`, the class is read
// only for functions of that vendor: one read per function on a host with none. A missing
// bus/pci/devices/ is no error (a container without /sys/bus).
std::vector<PciFunction> ReadPciFunctions(
    const Filesystem& fs, ReadErrors& errors,
    const std::function<bool(std::uint32_t vendor, std::uint32_t class_code)>& want,
    std::optional<std::uint32_t> only_vendor = std::nullopt);

// The PCI address a link points to (class/net/<netdev>/device, class/hwmon/<hwmon>/device), or
// nullopt (no PCI parent, no such link).
std::optional<std::string> ResolvedPciAddress(const Filesystem& fs, const std::string& link);

// The PCI address class/infiniband/<device>/device resolves to ("0000:01:00.0"), or nullopt
// (no PCI parent: a soft-RoCE device, a fixture without links).
std::optional<std::string> InfinibandPciAddress(const Filesystem& fs, const std::string& device);

// The NIC side of GPUDirect RDMA as the kernel shows it, for people and the gpu_direct check.
struct PeerMemoryState {
  // kernel/mm/memory_peers/nv_mem/version or nv_mem_nc/version (MLNX_OFED peer memory client).
  std::optional<std::string> nv_mem_version;
  bool nvidia_peermem_loaded = false;  // module/nvidia_peermem/ exists
  // The running kernel (procfs sys/kernel/osrelease): dma-buf registration of GPU memory needs
  // 5.12 or later (and the open GPU kernel modules).
  std::optional<std::string> kernel_release;
  bool nvidia_open_modules = false;  // procfs driver/nvidia/version names "Open Kernel Module"
};
PeerMemoryState ReadPeerMemoryState(const Filesystem& sys, const Filesystem& proc,
                                    ReadErrors& errors);

}  // namespace rail::sysfs
