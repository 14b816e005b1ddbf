#include "rail/inventory/snapshot.h"

#include <set>

namespace rail::inventory {

const std::vector<sysfs::InfinibandDevice>& Snapshot::Devices() {
  if (devices_) return *devices_;
  if (sources_.gid_cache == nullptr || !sources_.infiniband.gids) {
    devices_ = sysfs::ReadInfiniband(*sources_.sys, sources_.infiniband, errors_);
    return *devices_;
  }
  auto options = sources_.infiniband;
  options.gids = false;
  devices_ = sysfs::ReadInfiniband(*sources_.sys, options, errors_);
  for (auto& device : *devices_) {
    for (auto& port : device.ports) {
      port.gids = sources_.gid_cache->Get(device.name, port.number, [&] {
        return sysfs::ReadGidTable(*sources_.sys, device.name, port.number, errors_);
      });
    }
  }
  return *devices_;
}

const std::vector<Rail>& Snapshot::Rails() {
  if (!rails_) {
    rails_ = DiscoverRails(Devices(), sources_.rails, sources_.discover_unlisted);
    // Discovery cannot tell whether a netdev-only rail's netdev exists (it sees RDMA devices
    // only): class/net/<netdev> answers, so that a deleted netdev shows as rail_present 0.
    for (auto& rail : *rails_) {
      if (rail.device.empty() && !rail.netdev.empty()) {
        rail.present = sources_.sys->IsDirectory("class/net/" + rail.netdev);
      }
    }
  }
  return *rails_;
}

const std::vector<sysfs::Bond>& Snapshot::Bonds() {
  if (!bonds_) bonds_ = sysfs::ReadBonds(*sources_.sys, *sources_.proc, errors_);
  return *bonds_;
}

const std::vector<sysfs::NetDevice>& Snapshot::NetDevices() {
  if (net_devices_) return *net_devices_;
  std::set<std::string> names;
  for (const auto& rail : Rails()) {
    if (!rail.netdev.empty()) names.insert(rail.netdev);
  }
  for (const auto& device : Devices()) names.insert(device.netdevs.begin(), device.netdevs.end());
  for (const auto& bond : Bonds()) {
    names.insert(bond.name);
    for (const auto& slave : bond.slaves) names.insert(slave.name);
  }
  if (Devices().empty()) {
    // Without RDMA hardware the host inventory is still useful: every netdev but loopback.
    for (auto& name : sysfs::ListNetDevices(*sources_.sys, errors_)) {
      if (name != "lo") names.insert(std::move(name));
    }
  }
  net_devices_.emplace();
  for (const auto& name : names) {
    if (auto device = sysfs::ReadNetDevice(*sources_.sys, name, errors_, sources_.netdev)) {
      net_devices_->push_back(std::move(*device));
    }
  }
  return *net_devices_;
}

const PcieTopology& Snapshot::Topology() {
  if (topology_) return *topology_;
  topology_ = sources_.topology_cache != nullptr
                  ? sources_.topology_cache->Read(*sources_.sys, Devices(), errors_)
                  : ReadPcieTopology(*sources_.sys, Devices(), errors_);
  return *topology_;
}

const sysfs::PeerMemoryState& Snapshot::PeerMemory() {
  if (!peer_memory_) {
    peer_memory_ = sysfs::ReadPeerMemoryState(*sources_.sys, *sources_.proc, errors_);
  }
  return *peer_memory_;
}

const std::vector<RailQos>& Snapshot::Qos() {
  if (qos_) return *qos_;
  qos_.emplace();
  if (sources_.qos && sources_.dcb != nullptr) {
    qos_ = ReadRailQos(Rails(), *sources_.dcb, *sources_.sys, errors_);
  }
  return *qos_;
}

const std::vector<RailNeighbors>& Snapshot::Neighbors() {
  if (neighbors_) return *neighbors_;
  neighbors_.emplace();
  if (sources_.neighbors && sources_.lldp != nullptr) {
    const nic::StatisticsSource& nic =
        sources_.nic_statistics != nullptr ? *sources_.nic_statistics : nic::KernelStatistics();
    const base::Clock& clock = sources_.clock != nullptr ? *sources_.clock : base::SystemClock();
    neighbors_ = ReadRailNeighbors(Rails(), sources_.lldp->Read(), nic, clock.WallNow());
  }
  return *neighbors_;
}

}  // namespace rail::inventory
