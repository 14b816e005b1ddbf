// The PCIe topology between scrapes. Where GPUs and RDMA devices sit, the paths between them and
// the most their links can train at are facts of the hardware: they change only when a PCI
// function comes or goes (hotplug, SR-IOV VFs created or removed), which changes the listing of
// bus/pci/devices, or when an RDMA device is registered anew, renamed or filtered differently,
// which changes the devices' names or node GUIDs. Reading them costs a realpath() per GPU and
// RDMA function and two reads per PCI function on the host, every scrape. So the topology is
// kept while the listing and the (name, node GUID) of every RDMA device stay the same, which
// costs one listing per scrape; what does change at run time, the links' current speed and width
// (a link retrains), is read on every scrape.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rail/inventory/pcie_topology.h"

namespace rail::inventory {

class PcieTopologyCache {
 public:
  // ReadPcieTopology's answer, with the placement reused while its key holds. A device without
  // a node GUID (nothing to tell a re-registered device by) makes every call a full read.
  PcieTopology Read(const sysfs::Filesystem& fs,
                    const std::vector<sysfs::InfinibandDevice>& devices, sysfs::ReadErrors& errors);

  // Full reads so far (for tests).
  std::size_t full_reads() const;

 private:
  struct Key {
    std::vector<std::string> pci_functions;                    // bus/pci/devices, sorted
    std::vector<std::pair<std::string, std::string>> devices;  // name, node GUID
    bool operator==(const Key&) const = default;
  };

  mutable std::mutex mutex_;  // scrapes and the landing page read concurrently
  std::optional<Key> key_;
  PcieTopology topology_;
  std::size_t full_reads_ = 0;
};

}  // namespace rail::inventory
