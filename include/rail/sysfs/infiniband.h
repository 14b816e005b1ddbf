// RDMA devices under <sysfs>/class/infiniband. Typed structs whose fields name their files;
// `std::optional` where the kernel may not provide the file or the read failed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/read_errors.h"
#include "rail/sysfs/values.h"

namespace rail::sysfs {

// One PMA counter. Data counters are converted from 4-byte words to bytes here, so `value` is
// always in the unit of the metric (bytes or packets or events).
struct PortCounter {
  std::uint64_t value = 0;
  unsigned width_bits = 64;  // 4/8/16/32 for classic PMA counters, 64 for extended ones
  bool saturated = false;    // pegged at 2^width-1: the real value is unknown and higher
};

// Description of a standard PMA counter file and its width in the classic PortCounters table.
struct PmaCounterSpec {
  const char* file;     // name under ports/<p>/counters/
  unsigned width_bits;  // width without extended counters
  bool extended_width;  // becomes 64 bits when the port has extended counters
  std::uint64_t unit;   // multiplier to the exported unit (4 for data: 4-byte words)
};
// The standard counters/ files in a fixed order; hw_counters are read generically instead.
const std::vector<PmaCounterSpec>& PmaCounterSpecs();

struct GidEntry {
  unsigned index = 0;                 // from the file name gids/<index>
  Gid gid;                            // gids/<index>
  std::optional<GidType> type;        // gid_attrs/types/<index>
  std::optional<std::string> netdev;  // gid_attrs/ndevs/<index>
};

struct InfinibandPort {
  unsigned number = 0;                      // ports/<number>
  std::optional<NumberedState> state;       // ports/<n>/state
  std::optional<NumberedState> phys_state;  // ports/<n>/phys_state
  std::optional<PortRate> rate;             // ports/<n>/rate
  std::optional<std::string> link_layer;    // ports/<n>/link_layer ("InfiniBand", "Ethernet")
  std::optional<std::uint64_t> lid;         // ports/<n>/lid
  std::optional<std::uint64_t> sm_lid;      // ports/<n>/sm_lid
  bool has_extended_counters = false;       // counters/unicast_xmit_packets exists
  // counters/<file> keyed by file name; missing files and "N/A (no PMA)" are absent. Looked up
  // by string_view (std::less<>): a scrape looks up every named counter of every port, and a
  // temporary std::string per lookup was most of the infiniband collector's allocations.
  std::map<std::string, PortCounter, std::less<>> counters;
  // counters_ext/<file> (older drivers such as qib/hfi1 expose 64-bit copies here), in bytes;
  // the collector prefers them over narrow counters/ files.
  std::map<std::string, PortCounter, std::less<>> counters_ext;
  // hw_counters/<file>: every file, whatever the vendor names them.
  std::map<std::string, std::uint64_t> hw_counters;
  // A software device without PMA (rxe): its parent netdev's class/net/<parent>/statistics/
  // {tx,rx}_{bytes,packets}, which count all of its traffic; read with the counters.
  std::map<std::string, std::uint64_t> netdev_statistics;
  std::vector<GidEntry> gids;  // non-empty slots of gids/, only when GIDs were requested

  bool IsActive() const;    // state 4 (ACTIVE) and phys_state 5 (LinkUp)
  bool IsEthernet() const;  // link_layer Ethernet: RoCE
};

struct InfinibandDevice {
  std::string name;                           // class/infiniband/<name>
  std::optional<std::string> node_guid;       // node_guid
  std::optional<std::string> sys_image_guid;  // sys_image_guid
  std::optional<std::string> fw_ver;          // fw_ver
  std::optional<std::string> board_id;        // board_id
  std::optional<std::string> hca_type;        // hca_type
  std::optional<std::string> node_type;       // node_type ("1: CA")
  std::vector<std::string> netdevs;           // device/net/* (RoCE and IPoIB netdevs)
  // No `device` link: the device lives under devices/virtual, a software device (rxe, siw)
  // whose traffic is its netdev's. (Fixture trees unpacked from procfs' archive lack the link
  // too; their devices have PMA counters, which always come first.)
  bool virtual_device = false;
  std::optional<std::string> parent;  // parent (rxe only): the netdev it runs over
  std::vector<InfinibandPort> ports;  // ports/*
};

// Where a port's data counters (rail_port_{transmit,receive}_bytes_total, the probes' counter
// cross-check) come from.
enum class DataCounterSource {
  kCounters,          // counters/port_xmit_data, the PMA's
  kCountersExt,       // counters_ext/port_xmit_data, the PMA's 64-bit copy (qib, hfi1)
  kNetdevStatistics,  // class/net/<parent>/statistics/: a virtual device without PMA (rxe)
  kNone,              // no PMA, and a netdev that does not see RDMA traffic (mlx5 bypasses it)
};
DataCounterSource PortDataCounterSource(const InfinibandDevice& device, const InfinibandPort& port);
// "counters", "counters_ext", "netdev_statistics", "none": rail_port_bytes_source_info's
// source label.
const char* DataCounterSourceName(DataCounterSource source);

// The counter `file` (a counters/ name) is best read from: counters/<file>, or its 64-bit
// counters_ext/ copy where the classic file is narrower or absent (qib, hfi1). nullptr when the
// port has neither.
const PortCounter* BestPortCounter(const InfinibandPort& port, std::string_view file);

struct InfinibandReadOptions {
  bool counters = true;     // counters/ and counters_ext/ (a software device's: its netdev's)
  bool hw_counters = true;  // hw_counters/
  bool gids = true;         // gids/ and gid_attrs/
  // node_guid, sys_image_guid, fw_ver, board_id, hca_type, node_type: what a device is, which a
  // reader that only follows counters (the fabric sampler) does not need every time.
  bool identity = true;
  bool port_link_details = true;  // a port's rate, lid and sm_lid (state and phys_state always)
  // Decides, from its name alone, whether a counter file (counters/, counters_ext/,
  // hw_counters/) is read; unset: every one (the fabric sampler reads the few its checks use).
  std::function<bool(std::string_view)> counter_filter;
  // Decides, from the name alone, whether a device is read at all. Excluded devices get no read
  // of any of their files: firmware on some restricted PFs logs an error for every read.
  std::function<bool(const std::string&)> device_filter;
};

// Lists class/infiniband. A missing class directory is not an error: the host has no RDMA device.
std::vector<std::string> ListInfinibandDevices(const Filesystem& sys, ReadErrors& errors);

// Reads every device that passes the filter. Unreadable files are skipped and recorded.
std::vector<InfinibandDevice> ReadInfiniband(const Filesystem& sys,
                                             const InfinibandReadOptions& options,
                                             ReadErrors& errors);

// Reads again the counter values of devices read before (the counters/, counters_ext/ and
// hw_counters/ files, and a software device's netdev statistics, that each port already holds)
// and nothing else: no listing, no attribute, no GID. False when one of them cannot be read (a
// device removed, or re-created without it): the caller reads the devices afresh.
bool RereadCounters(const Filesystem& sys, std::vector<InfinibandDevice>& devices,
                    ReadErrors& errors);

// Reads one port's GID table (gids/, gid_attrs/types, gid_attrs/ndevs), skipping empty slots
// without touching their attributes.
std::vector<GidEntry> ReadGidTable(const Filesystem& sys, const std::string& device, unsigned port,
                                   ReadErrors& errors);

}  // namespace rail::sysfs
