#include "rail/health/evidence.h"

#include <spdlog/fmt/fmt.h>

namespace rail::health {
namespace {

const inventory::Rail* FindRail(const std::vector<inventory::Rail>& rails,
                                const std::string& name) {
  for (const auto& rail : rails) {
    if (rail.name == name) return &rail;
  }
  return nullptr;
}

std::string PciFiles(const inventory::PcieTopology& topology, const inventory::Rail* rail) {
  if (rail == nullptr) {
    std::vector<std::string> gpus;
    for (const auto& gpu : topology.gpus) gpus.push_back(gpu.pci_bus_id);
    return fmt::format(
        "sysfs bus/pci/devices/{{{}}}/{{current,max}}_link_width; a GPU's speed "
        "only from cuda probe runs",
        fmt::join(gpus, ","));
  }
  if (const auto* device = inventory::FindRdmaDevice(topology, rail->device)) {
    return fmt::format("sysfs bus/pci/devices/{}/{{current,max}}_link_{{speed,width}}",
                       device->pci_bus_id);
  }
  return "sysfs bus/pci/devices/";
}

}  // namespace

std::string PortEvidence(const inventory::Rail* rail, const std::string& files) {
  if (rail == nullptr || rail->device.empty()) return "sysfs class/infiniband/";
  return fmt::format("sysfs class/infiniband/{}/ports/{}/{}", rail->device, rail->port, files);
}

std::string Evidence(const CheckResult& verdict, const std::vector<inventory::Rail>& rails,
                     const inventory::PcieTopology& topology) {
  const auto* rail = FindRail(rails, verdict.rail);
  const auto& check = verdict.check;
  if (check == "port_active") return PortEvidence(rail, "{state,phys_state}");
  if (check == "port_rate") return PortEvidence(rail, "rate");
  if (check == "roce_gid") return PortEvidence(rail, "{gids,gid_attrs/types,gid_attrs/ndevs}/*");
  if (check == "counter_saturated") return PortEvidence(rail, "{counters,counters_ext}/*");
  if (check == "duplicate_subnet") return "the interfaces' IPv4 addresses (getifaddrs)";
  if (check == "mtu") return "sysfs class/net/" + (rail ? rail->netdev : "") + "/mtu";
  if (check == "peer_mtu" || check == "peer_version" || check == "peer_hello") {
    return "the hello of peer " + verdict.peer;
  }
  if (check == "pcie_link") return PciFiles(topology, rail);
  if (check == "gpu_nic_affinity") return "the PCIe tree (sysfs bus/pci/devices/ link targets)";
  if (check == "nic_temperature") return "sysfs class/hwmon/<the NIC's hwmon>/temp*";
  if (check == "qos_config") {
    const auto netdev = rail ? rail->netdev : "<netdev>";
    return fmt::format("DCB netlink (dcb pfc show dev {0}; dcb app show dev {0})", netdev);
  }
  if (check == "rail_cabling") {
    return fmt::format("lldpd's neighbours of {} (lldpcli show neighbors)",
                       rail ? rail->netdev : "<netdev>");
  }
  if (check == "ucx_device_quirk")
    return PortEvidence(rail, "gids/*") + "; the worker's UCX version";
  if (check == "gpu_direct") {
    return "the probe worker's --capabilities (CUDA driver, dma-buf, UCX memory types); sysfs "
           "kernel/mm/memory_peers/, module/nvidia_peermem/";
  }
  return "the probe results";  // multirail_striping, probe_throughput, transport_fallback, ...
}

}  // namespace rail::health
