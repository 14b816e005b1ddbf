// What one scrape has read so far. Reads are lazy and happen once per scrape: the first
// collector that needs the RDMA devices reads them (and is charged the time), the others reuse
// them. Collectors never read files themselves.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/inventory/gid_cache.h"
#include "rail/inventory/neighbors.h"
#include "rail/inventory/pcie_topology.h"
#include "rail/inventory/qos.h"
#include "rail/inventory/rails.h"
#include "rail/inventory/topology_cache.h"
#include "rail/nic/ethtool.h"
#include "rail/nic/fabric_counters.h"
#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/hwmon.h"
#include "rail/sysfs/infiniband.h"
#include "rail/sysfs/netclass.h"
#include "rail/sysfs/pci.h"
#include "rail/sysfs/read_errors.h"

namespace rail::inventory {

// Where a snapshot reads from and what it reads.
struct Sources {
  const sysfs::Filesystem* sys = nullptr;       // --path.sysfs
  const sysfs::Filesystem* proc = nullptr;      // --path.procfs
  sysfs::InfinibandReadOptions infiniband;      // what of each device is read, and which devices
  sysfs::NetDeviceReadOptions netdev;           // what of each netdev is read
  GidCache* gid_cache = nullptr;                // when set, GID tables come through it
  PcieTopologyCache* topology_cache = nullptr;  // when set, the PCIe topology comes through it
  std::vector<RailConfig> rails;                // rails[] of the configuration
  bool discover_unlisted = true;                // also publish active ports no rails[] entry names
  // Whether the rails' NIC statistics and temperatures are read at all (the ethtool collector).
  bool fabric = false;
  // Where `ethtool -S` comes from: recorded dumps (--path.ethtool), else null: this network
  // namespace's kernel.
  const nic::StatisticsSource* nic_statistics = nullptr;
  const nic::DcbReader* dcb = nullptr;  // where rails' DCB configuration comes from
  bool qos = false;                     // read it (the qos collector is on)
  // Where the rails' LLDP neighbours come from (lldpd's socket), and whether to read them (the
  // neighbor collector is on); `clock`'s wall time ages them (null: the system's clock).
  const lldp::NeighborSource* lldp = nullptr;
  bool neighbors = false;
  const base::Clock* clock = nullptr;
};

// A rail's netdev (each slave of a bonded one) as its NIC driver counts the fabric.
struct RailFabric {
  std::string rail;
  nic::FabricReading reading;
};

// A temperature sensor of a rail's NIC (class/hwmon/<hwmon> whose device is the rail's PCI
// function).
struct RailTemperature {
  std::string rail;
  std::string hwmon;  // "hwmon3"
  sysfs::HwmonTemperature sensor;
};

class Snapshot {
 public:
  Snapshot(const Sources& sources, sysfs::ReadErrors& errors)
      : sources_(sources), errors_(errors) {}

  const std::vector<sysfs::InfinibandDevice>& Devices();
  // Devices read before (their values re-read by the caller: sysfs::RereadCounters) instead of
  // reading them: the rails, their netdevs and NIC statistics are then found from these.
  void UseDevices(std::vector<sysfs::InfinibandDevice> devices) { devices_ = std::move(devices); }
  const std::vector<Rail>& Rails();
  const std::vector<sysfs::Bond>& Bonds();
  // The netdevs the netclass collector reports: rails' and RDMA devices' netdevs, bonds and
  // their slaves; every netdev but loopback when the host has no RDMA device at all.
  const std::vector<sysfs::NetDevice>& NetDevices();
  // GPUs, the RDMA devices' PCI functions and the paths between them (bus/pci/devices/).
  const PcieTopology& Topology();
  // The NIC side of GPUDirect RDMA: peer memory, nvidia_peermem, kernel release.
  const sysfs::PeerMemoryState& PeerMemory();
  // The rails' fabric counters; empty unless sources().fabric.
  const std::vector<RailFabric>& Fabric();
  // The rails' NIC temperatures; empty unless sources().fabric, and on kernels whose NIC driver
  // registers no hwmon device (Debian 12's 6.1 for mlx5).
  const std::vector<RailTemperature>& NicTemperatures();
  // The rails' QoS configuration; empty unless `qos` is set and a DCB reader is given.
  const std::vector<RailQos>& Qos();
  // The rails' LLDP neighbours; empty unless `neighbors` is set and an lldp source is given.
  const std::vector<RailNeighbors>& Neighbors();

  const Sources& sources() const { return sources_; }
  sysfs::ReadErrors& errors() { return errors_; }

 private:
  const Sources& sources_;
  sysfs::ReadErrors& errors_;
  std::optional<std::vector<sysfs::InfinibandDevice>> devices_;
  std::optional<std::vector<Rail>> rails_;
  std::optional<std::vector<sysfs::Bond>> bonds_;
  std::optional<std::vector<sysfs::NetDevice>> net_devices_;
  std::optional<PcieTopology> topology_;
  std::optional<sysfs::PeerMemoryState> peer_memory_;
  std::optional<std::vector<RailFabric>> fabric_;
  std::optional<std::vector<RailTemperature>> temperatures_;
  std::optional<std::vector<RailQos>> qos_;
  std::optional<std::vector<RailNeighbors>> neighbors_;
};

}  // namespace rail::inventory
