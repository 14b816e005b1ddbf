#include "rail/scrape_snapshot.h"

#include <algorithm>
#include <set>

#include "rail/gid_cache.h"

namespace rail {

void SelectReads(const std::vector<std::string>& collectors, SnapshotSources* sources) {
  const auto enabled = [&collectors](const char* name) {
    return std::find(collectors.begin(), collectors.end(), name) != collectors.end();
  };
  // GIDs also give a rail its IPv4 (netclass finds a rail's netdev through device/net/ when GIDs
  // are not read). The health checks need the PMA counters (counter_saturated) and the GIDs
  // (roce_gid); nothing but their own collectors needs hw_counters/ or netdev statistics/, which
  // are most of a large host's files.
  const bool health = enabled("health");
  sources->infiniband.counters = enabled("infiniband") || health;
  sources->infiniband.hw_counters = enabled("hw_counters");
  sources->infiniband.gids = enabled("gid") || enabled("rails") || health;
  sources->netdev.statistics = enabled("netdev");
}

const std::vector<sysfs::InfinibandDevice>& ScrapeSnapshot::Devices() {
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

const std::vector<Rail>& ScrapeSnapshot::Rails() {
  if (!rails_) {
    static const AgentConfig kNoConfig;
    rails_ = DiscoverRails(Devices(), sources_.config ? *sources_.config : kNoConfig);
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

const std::vector<sysfs::Bond>& ScrapeSnapshot::Bonds() {
  if (!bonds_) bonds_ = sysfs::ReadBonds(*sources_.sys, *sources_.proc, errors_);
  return *bonds_;
}

const std::vector<sysfs::NetDevice>& ScrapeSnapshot::NetDevices() {
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

}  // namespace rail
