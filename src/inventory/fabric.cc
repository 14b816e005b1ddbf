// The per-scrape reads of the rails' NIC side that sysfs files do not hold: `ethtool -S` through
// the nic layer, and the NIC's hwmon temperatures.
#include <cerrno>
#include <map>

#include "rail/inventory/snapshot.h"
#include "rail/sysfs/pci.h"

namespace rail::inventory {
namespace {

// The netdevs whose statistics stand for the rail's: a bond's slaves (the bond lists none of its
// own), else the netdev itself.
std::vector<std::string> FabricNetdevs(const Rail& rail, const std::vector<sysfs::Bond>& bonds) {
  for (const auto& bond : bonds) {
    if (bond.name != rail.netdev) continue;
    std::vector<std::string> slaves;
    for (const auto& slave : bond.slaves) slaves.push_back(slave.name);
    return slaves;
  }
  return {rail.netdev};
}

// Errors that mean "nothing to read" rather than a failure: no such netdev (a deleted rail), no
// statistics from this driver, no dump recorded.
bool NothingToRead(int error) {
  return error == ENODEV || error == EOPNOTSUPP || error == ENOENT;
}

}  // namespace

const std::vector<RailFabric>& Snapshot::Fabric() {
  if (fabric_) return *fabric_;
  fabric_.emplace();
  if (!sources_.fabric) return *fabric_;
  const nic::StatisticsSource& source =
      sources_.nic_statistics ? *sources_.nic_statistics : nic::KernelStatistics();
  const bool any_bond = sources_.sys->Exists("class/net/bonding_masters");
  for (const auto& rail : Rails()) {
    if (rail.netdev.empty()) continue;
    const auto netdevs = any_bond ? FabricNetdevs(rail, Bonds()) : std::vector{rail.netdev};
    for (const auto& netdev : netdevs) {
      RailFabric fabric{rail.name, {}};
      const int error = nic::ReadFabricReading(source, *sources_.sys, netdev, &fabric.reading,
                                               /*read_pause=*/sources_.qos);
      if (error != 0) {
        if (!NothingToRead(error)) errors_.AddErrno("ethtool -S " + netdev, error);
        continue;
      }
      fabric_->push_back(std::move(fabric));
    }
  }
  return *fabric_;
}

const std::vector<RailTemperature>& Snapshot::NicTemperatures() {
  if (temperatures_) return *temperatures_;
  temperatures_.emplace();
  if (!sources_.fabric) return *temperatures_;
  std::map<std::string, std::string> rail_by_address;
  for (const auto& rail : Rails()) {
    std::optional<std::string> address;
    // With a topology cache the device's PCI function is known without the realpath() that
    // finding it costs (the pcie collector reads the topology every scrape anyway).
    const RdmaPciDevice* rdma = sources_.topology_cache != nullptr && !rail.device.empty()
                                    ? FindRdmaDevice(Topology(), rail.device)
                                    : nullptr;
    if (rdma != nullptr) {
      address = rdma->pci_bus_id;
    } else if (!rail.device.empty()) {
      address = sysfs::InfinibandPciAddress(*sources_.sys, rail.device);
    }
    if (!address && !rail.netdev.empty()) {
      address = sysfs::ResolvedPciAddress(*sources_.sys, "class/net/" + rail.netdev + "/device");
    }
    if (address) rail_by_address.emplace(*address, rail.name);
  }
  if (rail_by_address.empty()) return *temperatures_;
  const auto hwmons = sysfs::ReadPciHwmons(*sources_.sys, errors_, [&](const std::string& address) {
    return rail_by_address.contains(address);
  });
  for (const auto& hwmon : hwmons) {
    for (const auto& sensor : hwmon.temperatures) {
      temperatures_->push_back({rail_by_address.at(hwmon.pci_address), hwmon.name, sensor});
    }
  }
  return *temperatures_;
}

}  // namespace rail::inventory
