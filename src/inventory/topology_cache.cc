#include "rail/inventory/topology_cache.h"

namespace rail::inventory {
namespace {

// The key of the placement; nullopt when it cannot be told (a device without a node GUID, or
// bus/pci/devices unreadable).
template <typename Key>
std::optional<Key> KeyOf(const sysfs::Filesystem& fs,
                         const std::vector<sysfs::InfinibandDevice>& devices) {
  Key key;
  if (fs.ListDirectory("bus/pci/devices", &key.pci_functions) != 0) return std::nullopt;
  for (const auto& device : devices) {
    if (!device.node_guid) return std::nullopt;
    key.devices.emplace_back(device.name, *device.node_guid);
  }
  return key;
}

// The link as trained now; the maximum is the hardware's, and what it could train at against its
// upstream port (attainable_*) stays as read with the placement.
void ReadCurrentLink(const sysfs::Filesystem& fs, const std::string& address, PciLinkState& state,
                     sysfs::ReadErrors& errors) {
  state.link = sysfs::ReadPciLink(fs, address, errors);
}

}  // namespace

PcieTopology PcieTopologyCache::Read(const sysfs::Filesystem& fs,
                                     const std::vector<sysfs::InfinibandDevice>& devices,
                                     sysfs::ReadErrors& errors) {
  auto key = KeyOf<Key>(fs, devices);
  std::lock_guard lock(mutex_);
  if (!key || !key_ || !(*key == *key_)) {
    ++full_reads_;
    topology_ = ReadPcieTopology(fs, devices, errors);
    key_ = std::move(key);
    return topology_;
  }
  for (auto& gpu : topology_.gpus) ReadCurrentLink(fs, gpu.pci_bus_id, gpu.link, errors);
  for (auto& device : topology_.devices) {
    ReadCurrentLink(fs, device.pci_bus_id, device.link, errors);
  }
  return topology_;
}

std::size_t PcieTopologyCache::full_reads() const {
  std::lock_guard lock(mutex_);
  return full_reads_;
}

}  // namespace rail::inventory
