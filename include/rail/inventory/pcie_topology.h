// The PCIe topology between GPUs and RDMA devices, assembled from the PCI functions the sysfs
// library read (no driver needed): the path of every GPU x RDMA device pair as `nvidia-smi topo -m`
// names it, and each device's link against the most it could train at. Facts only; the
// pcie_link and gpu_nic_affinity checks judge them (health/).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rail/inventory/rails.h"
#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/infiniband.h"
#include "rail/sysfs/pci.h"
#include "rail/sysfs/read_errors.h"

namespace rail::inventory {

// Nearest first, so that paths compare with < ("beyond PXB" is path > kPxb).
//   PIX   through at most one PCIe switch (an upstream port and its downstream ports)
//   PXB   through several switches, never the host bridge
//   PHB   through the host bridge of one root complex (the CPU)
//   NODE  between root complexes of one NUMA node (NCCL folds it into PHB)
//   SYS   across NUMA nodes (the inter-socket link)
enum class PciPath { kPix, kPxb, kPhb, kNode, kSys };
const char* PciPathName(PciPath path);  // "PIX", "PXB", ...
std::optional<PciPath> ParsePciPath(const std::string& name);

// How a GPU reaches the CPU: over PCIe, or NVLink-C2C on Grace-class hosts (GH200, GB200, the
// DGX Spark's integrated GB10), where GPU memory is coherent with the host's.
enum class GpuAttach { kPcie, kC2c };
const char* GpuAttachName(GpuAttach attach);  // "pcie", "c2c"

struct PciLinkState {
  sysfs::PciLink link;
  // The most the link can train at: the smaller of the function's own maximum and its upstream
  // port's (a x16 GPU in a x8 slot is not degraded at x8). nullopt when neither is known.
  std::optional<double> attainable_speed_gts;
  std::optional<unsigned> attainable_width;
};

struct Gpu {
  std::string pci_bus_id;  // "0000:17:00.0"
  std::optional<int> numa_node;
  std::uint32_t device_id = 0;
  GpuAttach attach = GpuAttach::kPcie;
  PciLinkState link;
};

struct RdmaPciDevice {
  std::string device;      // class/infiniband/<device>
  std::string pci_bus_id;  // where class/infiniband/<device>/device resolves
  std::optional<int> numa_node;
  PciLinkState link;
};

struct GpuNicPath {
  std::string pci_bus_id;  // the GPU
  std::string device;      // the RDMA device
  PciPath path = PciPath::kSys;
};

struct PcieTopology {
  std::vector<Gpu> gpus;               // by PCI address
  std::vector<RdmaPciDevice> devices;  // RDMA devices with a PCI function, by name
  std::vector<GpuNicPath> paths;       // every GPU x device pair, GPU-major
};

// The path between two functions of the tree.
PciPath PathBetween(const sysfs::PciFunction& a, const sysfs::PciFunction& b);

// GPUs (NVIDIA vendor, display class) and the PCI functions of `devices`, read under `fs`
// (--path.sysfs); problems go to `errors`.
PcieTopology ReadPcieTopology(const sysfs::Filesystem& fs,
                              const std::vector<sysfs::InfinibandDevice>& devices,
                              sysfs::ReadErrors& errors);

// The path of one pair, or nullptr.
const GpuNicPath* FindPath(const PcieTopology& topology, const std::string& pci_bus_id,
                           const std::string& device);

// An RDMA device's PCI function, or nullptr (no such device, or it has no PCI parent).
const RdmaPciDevice* FindRdmaDevice(const PcieTopology& topology, const std::string& device);

// The GPU nearest to an RDMA device (ties: lowest PCI address), or nullptr when there is none.
const Gpu* NearestGpu(const PcieTopology& topology, const std::string& device);
// The RDMA device nearest to a GPU, or nullptr.
const RdmaPciDevice* NearestDevice(const PcieTopology& topology, const std::string& pci_bus_id);

}  // namespace rail::inventory
