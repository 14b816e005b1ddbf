#include "rail/inventory/rails.h"

#include <algorithm>
#include <map>

namespace rail::inventory {

std::string DefaultRailName(const std::string& device, unsigned port) {
  return device + ":" + std::to_string(port);
}

std::string PortNetdev(const sysfs::InfinibandDevice& device, const sysfs::InfinibandPort& port) {
  std::map<std::string, int> votes;
  for (const auto& gid : port.gids) {
    if (gid.netdev && !gid.netdev->empty()) ++votes[*gid.netdev];
  }
  if (!votes.empty()) {
    return std::max_element(votes.begin(), votes.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
  }
  if (device.netdevs.size() == 1) return device.netdevs.front();
  if (port.number >= 1 && port.number <= device.netdevs.size()) {
    return device.netdevs[port.number - 1];
  }
  return {};
}

const sysfs::GidEntry* PortIpv4Gid(const sysfs::InfinibandPort& port, const std::string& netdev) {
  for (const auto& entry : port.gids) {
    if (entry.type != sysfs::GidType::kRoceV2) continue;
    if (!netdev.empty() && entry.netdev && *entry.netdev != netdev) continue;
    if (entry.gid.IsIpv4Mapped()) return &entry;
  }
  return nullptr;
}

std::string PortIpv4(const sysfs::InfinibandPort& port, const std::string& netdev) {
  const auto* entry = PortIpv4Gid(port, netdev);
  return entry ? entry->gid.Ipv4().value_or("") : "";
}

const sysfs::InfinibandPort* FindRailPort(const std::vector<sysfs::InfinibandDevice>& devices,
                                          const Rail& rail) {
  if (rail.device.empty()) return nullptr;
  for (const auto& device : devices) {
    if (device.name != rail.device) continue;
    for (const auto& port : device.ports) {
      if (port.number == rail.port) return &port;
    }
  }
  return nullptr;
}

const sysfs::NetDevice* FindNetDevice(const std::vector<sysfs::NetDevice>& net_devices,
                                      const std::string& name) {
  if (name.empty()) return nullptr;
  for (const auto& net_device : net_devices) {
    if (net_device.name == name) return &net_device;
  }
  return nullptr;
}

namespace {

Rail FromPort(const sysfs::InfinibandDevice& device, const sysfs::InfinibandPort& port) {
  Rail rail;
  rail.name = DefaultRailName(device.name, port.number);
  rail.device = device.name;
  rail.port = port.number;
  rail.netdev = PortNetdev(device, port);
  rail.link_layer = port.link_layer.value_or("");
  if (const sysfs::GidEntry* gid = PortIpv4Gid(port, rail.netdev)) {
    rail.ipv4 = PortIpv4(port, rail.netdev);
    rail.roce_v2_gid_index = gid->index;
  }
  rail.present = true;
  rail.active = port.IsActive();
  return rail;
}

const sysfs::InfinibandPort* FindPort(const std::vector<sysfs::InfinibandDevice>& devices,
                                      const std::string& device_name, unsigned port_number,
                                      const sysfs::InfinibandDevice** device_out) {
  for (const auto& device : devices) {
    if (device.name != device_name) continue;
    for (const auto& port : device.ports) {
      if (port.number == port_number) {
        *device_out = &device;
        return &port;
      }
    }
  }
  return nullptr;
}

Rail FromConfig(const RailConfig& configured, const std::vector<sysfs::InfinibandDevice>& devices) {
  Rail rail;
  if (configured.device) {
    const unsigned port_number = configured.port.value_or(1);
    const sysfs::InfinibandDevice* device = nullptr;
    if (const auto* port = FindPort(devices, *configured.device, port_number, &device)) {
      rail = FromPort(*device, *port);
    } else {
      rail.device = *configured.device;
      rail.port = port_number;
    }
  }
  rail.name = configured.name;
  rail.source = RailSource::kConfigured;
  if (configured.netdev) {
    rail.netdev = *configured.netdev;
    if (!configured.device) rail.link_layer = "Ethernet";
  }
  if (configured.ipv4) rail.ipv4 = *configured.ipv4;
  rail.expected_rate_gbps = configured.expected_rate_gbps;
  // A netdev-only rail has no RDMA device, so TCP is all it can carry.
  rail.transport = configured.transport.value_or(configured.device ? TransportClass::kRdma
                                                                   : TransportClass::kTcp);
  if (!configured.device) rail.present = true;
  return rail;
}

}  // namespace

std::vector<Rail> DiscoverRails(const std::vector<sysfs::InfinibandDevice>& devices,
                                const std::vector<RailConfig>& configured, bool discover_unlisted) {
  std::vector<Rail> rails;
  for (const auto& entry : configured) rails.push_back(FromConfig(entry, devices));
  if (!discover_unlisted) return rails;

  auto claimed = [&rails](const std::string& device, unsigned port) {
    return std::any_of(rails.begin(), rails.end(), [&](const Rail& rail) {
      return rail.device == device && rail.port == port;
    });
  };
  for (const auto& device : devices) {
    for (const auto& port : device.ports) {
      if (!port.IsActive() || claimed(device.name, port.number)) continue;
      rails.push_back(FromPort(device, port));
    }
  }
  return rails;
}

std::optional<double> LineRate(const Rail& rail, const sysfs::InfinibandPort* port,
                               const sysfs::NetDevice* netdev) {
  if (port != nullptr && port->rate) return port->rate->BytesPerSecond();
  if (rail.expected_rate_gbps) return *rail.expected_rate_gbps * 1e9 / 8;
  if (rail.transport == TransportClass::kRdma && netdev != nullptr && netdev->speed_mbps &&
      *netdev->speed_mbps > 0) {
    return static_cast<double>(*netdev->speed_mbps) * 1e6 / 8;
  }
  return std::nullopt;
}

}  // namespace rail::inventory
