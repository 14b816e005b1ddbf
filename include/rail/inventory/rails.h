// A rail is an RDMA port that carries traffic (RoCE port with its netdev, or an IB port), or a
// plain netdev named in the configuration (TCP rails of the lab). Discovery is pure: it works on
// the structs the sysfs library read, never on files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rail/sysfs/infiniband.h"
#include "rail/sysfs/netclass.h"

namespace rail::inventory {

// How a rail is expected to carry probe traffic: RDMA transports on RoCE/IB ports, plain TCP on
// lab veths. Used later to tell a silent fallback to TCP from an expected TCP rail.
enum class TransportClass { kRdma, kTcp };

struct RailConfig {
  std::string name;                          // rails[].name, the `rail` label
  std::optional<std::string> device;         // rails[].device, RDMA device (class/infiniband/<d>)
  std::optional<unsigned> port;              // rails[].port, default 1
  std::optional<std::string> netdev;         // rails[].netdev, overrides the discovered netdev
  std::optional<std::string> ipv4;           // rails[].ipv4, overrides the address taken from GIDs
  std::optional<double> expected_rate_gbps;  // rails[].expected_rate_gbps
  std::optional<TransportClass> transport;   // rails[].transport: rdma | tcp

  bool operator==(const RailConfig&) const = default;
};

enum class RailSource { kConfigured, kDiscovered };

struct Rail {
  std::string name;
  std::string device;      // RDMA device; empty for a netdev-only rail
  unsigned port = 0;       // 0 for a netdev-only rail
  std::string netdev;      // empty when none is known (IB port without IPoIB)
  std::string link_layer;  // "Ethernet", "InfiniBand" or "" when unknown
  std::string ipv4;        // from config, else the RoCE v2 IPv4-mapped GID on `netdev`
  // The index of that GID (PortIpv4Gid): what `ib_write_bw -x` and UCX_IB_GID_INDEX take. Not
  // the same on every device: 3 on mlx5 (RoCE v1 entries first), 1 on rxe.
  std::optional<unsigned> roce_v2_gid_index;
  bool present = false;  // the configured device/port exists on this host
  bool active = false;   // port ACTIVE and LinkUp (netdev-only rails: not known here)
  std::optional<double> expected_rate_gbps;
  TransportClass transport = TransportClass::kRdma;
  RailSource source = RailSource::kDiscovered;
};

// Default name of a discovered rail: "<device>:<port>".
std::string DefaultRailName(const std::string& device, unsigned port);

// The netdev a RoCE port carries: the netdev most of its GIDs name, else the device's only
// netdev, else the device's netdev at index port-1.
std::string PortNetdev(const sysfs::InfinibandDevice& device, const sysfs::InfinibandPort& port);

// The port's first RoCE v2 IPv4-mapped GID on `netdev` (any netdev when empty), or nullptr: the
// GID RDMA CM and UCX pick for the rail's address.
const sysfs::GidEntry* PortIpv4Gid(const sysfs::InfinibandPort& port, const std::string& netdev);
// The IPv4 address of PortIpv4Gid, or "".
std::string PortIpv4(const sysfs::InfinibandPort& port, const std::string& netdev);

// The rail's RDMA port among `devices`, or nullptr (netdev-only rail, or the port is missing).
const sysfs::InfinibandPort* FindRailPort(const std::vector<sysfs::InfinibandDevice>& devices,
                                          const Rail& rail);
// class/net/<name> among `net_devices`, or nullptr.
const sysfs::NetDevice* FindNetDevice(const std::vector<sysfs::NetDevice>& net_devices,
                                      const std::string& name);

// The rail's line rate in bytes per second: its port's rate (ports/<n>/rate), else the configured
// expectation (rails[].expected_rate_gbps), else, for an RDMA rail, its netdev's speed
// (class/net/<netdev>/speed). A netdev-only rail's speed (a veth's nominal 10 Gbit/s) means
// nothing, so it has a line rate only when one is configured. `port` and `netdev` may be null.
std::optional<double> LineRate(const Rail& rail, const sysfs::InfinibandPort* port,
                               const sysfs::NetDevice* netdev);

// Configured rails first, in configuration order (also when their port is missing or down, so
// a sick rail stays visible), then, when `discover_unlisted`, every active port that no
// configured rail names, ordered by device and port.
std::vector<Rail> DiscoverRails(const std::vector<sysfs::InfinibandDevice>& devices,
                                const std::vector<RailConfig>& configured, bool discover_unlisted);

// discover_rails: defaults to true when no rail is configured and false otherwise.
inline bool DiscoverUnlisted(const std::vector<RailConfig>& configured,
                             std::optional<bool> discover_rails) {
  return discover_rails.value_or(configured.empty());
}

}  // namespace rail::inventory
