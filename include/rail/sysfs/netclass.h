// Network interfaces under <sysfs>/class/net and bonds (<sysfs>/class/net/bonding_masters,
// <bond>/bonding/*, <bond>/lower_<slave>/bonding_slave/*, <procfs>/net/bonding/<bond>).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/read_errors.h"

namespace rail::sysfs {

struct NetDevice {
  std::string name;                                 // class/net/<name>
  std::optional<std::string> operstate;             // operstate ("up", "down", "unknown", ...)
  std::optional<bool> carrier;                      // carrier (EINVAL while the device is down)
  std::optional<std::uint64_t> mtu;                 // mtu, bytes
  std::optional<std::int64_t> speed_mbps;           // speed, Mbit/s (-1 or EINVAL when unknown)
  std::optional<std::string> address;               // address (MAC)
  std::optional<std::uint64_t> type;                // type (ARPHRD_*: 1 Ethernet, 32 InfiniBand)
  std::optional<std::uint64_t> carrier_changes;     // carrier_changes (admin down/up count too)
  std::optional<std::uint64_t> carrier_up_count;    // carrier_up_count
  std::optional<std::uint64_t> carrier_down_count;  // carrier_down_count
  std::map<std::string, std::uint64_t> statistics;  // statistics/<file>, every file
};

struct NetDeviceReadOptions {
  bool statistics = true;  // statistics/ (about 25 files per netdev)
  // operstate, carrier, mtu, speed, address, type, carrier_changes, carrier_up_count: all but
  // carrier_down_count, which is always read.
  bool link_attributes = true;
};

std::vector<std::string> ListNetDevices(const Filesystem& sys, ReadErrors& errors);
// Reads class/net/<name>; nullopt when the directory does not exist.
std::optional<NetDevice> ReadNetDevice(const Filesystem& sys, const std::string& name,
                                       ReadErrors& errors,
                                       const NetDeviceReadOptions& options = {});

// The driver bound to the netdev's parent device: where class/net/<name>/device/driver resolves
// ("mlx5_core", "bnxt_en"); nullopt for a virtual netdev (veth, bond) or a tree without links.
std::optional<std::string> NetDeviceDriver(const Filesystem& sys, const std::string& name);

struct BondSlave {
  std::string name;                                 // from <bond>/bonding/slaves
  std::optional<std::string> state;                 // lower_<s>/bonding_slave/state
  std::optional<std::string> mii_status;            // lower_<s>/bonding_slave/mii_status
  std::optional<std::uint64_t> link_failure_count;  // lower_<s>/bonding_slave/link_failure_count
  std::optional<std::string> perm_hwaddr;           // lower_<s>/bonding_slave/perm_hwaddr
  std::optional<std::uint64_t> queue_id;            // lower_<s>/bonding_slave/queue_id
  std::optional<std::uint64_t> ad_aggregator_id;    // lower_<s>/bonding_slave/ad_aggregator_id
  std::optional<std::string> proc_speed;            // proc net/bonding/<bond> "Speed:"
  std::optional<std::string> proc_duplex;           // proc net/bonding/<bond> "Duplex:"
};

struct Bond {
  std::string name;                             // from class/net/bonding_masters
  std::optional<std::string> mode;              // <bond>/bonding/mode ("balance-xor 2")
  std::optional<std::string> xmit_hash_policy;  // <bond>/bonding/xmit_hash_policy
  std::optional<std::string> mii_status;        // <bond>/bonding/mii_status
  std::optional<std::string> active_slave;      // <bond>/bonding/active_slave (empty: none)
  std::optional<std::uint64_t> miimon_ms;       // <bond>/bonding/miimon
  std::vector<BondSlave> slaves;                // <bond>/bonding/slaves
};

// /proc/net/bonding/<bond>, the text the bonding driver prints. Parsed for the facts sysfs lacks
// (per-slave speed and duplex) and as a fallback when sysfs bonding attributes are missing.
struct ProcBondSlave {
  std::string name;                                 // "Slave Interface:"
  std::optional<std::string> mii_status;            // "MII Status:"
  std::optional<std::string> speed;                 // "Speed:"
  std::optional<std::string> duplex;                // "Duplex:"
  std::optional<std::uint64_t> link_failure_count;  // "Link Failure Count:"
  std::optional<std::string> permanent_hw_addr;     // "Permanent HW addr:"
};
struct ProcBond {
  std::optional<std::string> mode;              // "Bonding Mode:"
  std::optional<std::string> xmit_hash_policy;  // "Transmit Hash Policy:"
  std::optional<std::string> mii_status;        // "MII Status:" before the first slave
  std::optional<std::string> active_slave;      // "Currently Active Slave:"
  std::vector<ProcBondSlave> slaves;
};
ProcBond ParseProcBonding(std::string_view text);

// Reads every bond named in bonding_masters, merging /proc/net/bonding/<bond> when present.
std::vector<Bond> ReadBonds(const Filesystem& sys, const Filesystem& proc, ReadErrors& errors);

}  // namespace rail::sysfs
