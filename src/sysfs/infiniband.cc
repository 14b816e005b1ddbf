#include "rail/sysfs/infiniband.h"

#include <algorithm>
#include <cerrno>
#include <limits>
#include <map>
#include <string_view>
#include <utility>

#include "sysfs/port_counters.h"
#include "sysfs/read_file.h"

namespace rail::sysfs {
namespace {

using detail::JoinPath;
using detail::Presence;

constexpr std::string_view kInfinibandClassDir = "class/infiniband";

// Directory entries named by a number (ports/1, gids/12), in numeric order: "10" sorts after
// "9". Other names are recorded as malformed and skipped.
std::vector<std::pair<unsigned, std::string>> NumberedEntries(const std::vector<std::string>& names,
                                                              const std::string& directory,
                                                              ReadErrors& errors) {
  std::vector<std::pair<unsigned, std::string>> entries;
  entries.reserve(names.size());
  for (const std::string& name : names) {
    auto number = ParseUnsigned(name);
    if (!number || name.find_first_not_of("0123456789") != std::string::npos ||
        *number > std::numeric_limits<unsigned>::max()) {
      errors.Add(JoinPath(directory, name), ReadFailure::kMalformed, name);
      continue;
    }
    entries.emplace_back(static_cast<unsigned>(*number), name);
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

bool Contains(const std::vector<std::string>& sorted, std::string_view name) {
  return std::binary_search(sorted.begin(), sorted.end(), name,
                            [](std::string_view a, std::string_view b) { return a < b; });
}

// Whether the counter file `name` (counters/, counters_ext/, hw_counters/) is read.
bool Wanted(const InfinibandReadOptions& options, std::string_view name) {
  return !options.counter_filter || options.counter_filter(name);
}

void ReadPmaCounters(const Filesystem& fs, const std::string& port_dir,
                     const InfinibandReadOptions& options, InfinibandPort& port,
                     ReadErrors& errors) {
  const std::string counters_dir = JoinPath(port_dir, "counters");
  const std::string ext_dir = JoinPath(port_dir, "counters_ext");
  const auto present = detail::ListAttributeNames(fs, counters_dir, errors, Presence::kOptional);
  std::vector<std::string> ext_present;
  const int ext_error = fs.ListDirectory(ext_dir, &ext_present);
  if (ext_error != 0 && ext_error != ENOENT) errors.AddErrno(ext_dir, ext_error);
  // The kernel creates unicast_* only when the device answers PortCountersExtended, and then
  // serves the data and packet counters from that 64-bit table too. counters_ext/ (qib, hfi1)
  // is a separate 64-bit copy: its presence says nothing of the width of counters/, whose
  // classic 32-bit data counters still peg (node_exporter exports both, as legacy_*).
  port.has_extended_counters = Contains(present, "unicast_xmit_packets");

  for (const PmaCounterSpec& spec : PmaCounterSpecs()) {
    if (!Contains(present, spec.file) || !Wanted(options, spec.file)) continue;
    const unsigned width = detail::PmaCounterWidth(spec, port.has_extended_counters);
    auto counter =
        detail::ReadPortCounter(fs, JoinPath(counters_dir, spec.file), width, spec.unit, errors);
    if (counter) port.counters.emplace(spec.file, *counter);
  }

  for (const std::string& name : ext_present) {
    if (!Wanted(options, name)) continue;
    auto counter = detail::ReadPortCounter(fs, JoinPath(ext_dir, name), 64,
                                           detail::CountersExtUnit(name), errors);
    if (counter) port.counters_ext.emplace(name, *counter);
  }
}

void ReadHwCounters(const Filesystem& fs, const std::string& port_dir,
                    const InfinibandReadOptions& options, InfinibandPort& port,
                    ReadErrors& errors) {
  const std::string dir = JoinPath(port_dir, "hw_counters");
  for (const std::string& name : detail::ListAttributeNames(fs, dir, errors, Presence::kOptional)) {
    if (!Wanted(options, name)) continue;
    auto value =
        detail::ReadParsed(fs, JoinPath(dir, name), errors, Presence::kOptional, ParseUnsigned);
    if (value) port.hw_counters.emplace(name, *value);
  }
}

// The netdev statistics that stand in for the data counters of a software device without PMA.
constexpr const char* kParentStatistics[] = {"tx_bytes", "rx_bytes", "tx_packets", "rx_packets"};

void ReadParentStatistics(const Filesystem& fs, InfinibandDevice& device, ReadErrors& errors) {
  if (!device.virtual_device || !device.parent) return;
  for (InfinibandPort& port : device.ports) {
    if (!port.counters.empty() || !port.counters_ext.empty()) continue;
    for (const char* statistic : kParentStatistics) {
      // class/net/<parent>/statistics/<statistic>
      const auto value =
          detail::ReadParsed(fs, JoinPath("class/net/" + *device.parent + "/statistics", statistic),
                             errors, Presence::kOptional, ParseUnsigned);
      if (value) port.netdev_statistics.emplace(statistic, *value);
    }
  }
}

InfinibandPort ReadPort(const Filesystem& fs, const std::string& device_dir,
                        const std::string& device, unsigned number, const std::string& entry,
                        const InfinibandReadOptions& options, ReadErrors& errors) {
  const std::string dir = JoinPath(JoinPath(device_dir, "ports"), entry);
  InfinibandPort port;
  port.number = number;
  port.state = detail::ReadParsed(fs, JoinPath(dir, "state"), errors, Presence::kRequired,
                                  ParseNumberedState);
  port.phys_state = detail::ReadParsed(fs, JoinPath(dir, "phys_state"), errors, Presence::kRequired,
                                       ParseNumberedState);
  port.link_layer =
      detail::ReadString(fs, JoinPath(dir, "link_layer"), errors, Presence::kOptional);
  if (options.port_link_details) {
    port.rate =
        detail::ReadParsed(fs, JoinPath(dir, "rate"), errors, Presence::kRequired, ParsePortRate);
    port.lid =
        detail::ReadParsed(fs, JoinPath(dir, "lid"), errors, Presence::kOptional, ParseUnsigned);
    port.sm_lid =
        detail::ReadParsed(fs, JoinPath(dir, "sm_lid"), errors, Presence::kOptional, ParseUnsigned);
  }
  if (options.counters) ReadPmaCounters(fs, dir, options, port, errors);
  if (options.hw_counters) ReadHwCounters(fs, dir, options, port, errors);
  if (options.gids) port.gids = ReadGidTable(fs, device, number, errors);
  return port;
}

InfinibandDevice ReadDevice(const Filesystem& fs, const std::string& name,
                            const InfinibandReadOptions& options, ReadErrors& errors) {
  const std::string dir = JoinPath(kInfinibandClassDir, name);
  InfinibandDevice device;
  device.name = name;
  auto read_string = [&](std::string_view file) {
    return detail::ReadString(fs, JoinPath(dir, file), errors, Presence::kOptional);
  };
  if (options.identity) {
    device.node_guid = read_string("node_guid");
    device.sys_image_guid = read_string("sys_image_guid");
    device.fw_ver = read_string("fw_ver");
    device.board_id = read_string("board_id");
    device.hca_type = read_string("hca_type");
    device.node_type = read_string("node_type");
  }
  // IB devices without IPoIB and some virtual drivers have no device/net at all.
  device.netdevs = detail::ListNames(fs, JoinPath(dir, "device/net"), errors, Presence::kOptional);
  device.virtual_device = !fs.Exists(JoinPath(dir, "device"));  // device (a link to the bus)
  if (device.virtual_device) device.parent = read_string("parent");

  const std::string ports_dir = JoinPath(dir, "ports");
  const auto names = detail::ListNames(fs, ports_dir, errors, Presence::kRequired);
  for (const auto& [number, entry] : NumberedEntries(names, ports_dir, errors)) {
    device.ports.push_back(ReadPort(fs, dir, name, number, entry, options, errors));
  }
  if (options.counters) ReadParentStatistics(fs, device, errors);
  return device;
}

// counters_ext/ of older drivers (qib, hfi1) holds 64-bit data counters that supersede the
// 32-bit ones in counters/.
constexpr std::pair<std::string_view, std::string_view> kExtendedReplacement[] = {
    {"port_xmit_data", "port_xmit_data_64"},
    {"port_rcv_data", "port_rcv_data_64"},
    {"port_xmit_packets", "port_xmit_packets_64"},
    {"port_rcv_packets", "port_rcv_packets_64"},
    {"unicast_xmit_packets", "port_unicast_xmit_packets"},
    {"unicast_rcv_packets", "port_unicast_rcv_packets"},
    {"multicast_xmit_packets", "port_multicast_xmit_packets"},
    {"multicast_rcv_packets", "port_multicast_rcv_packets"},
};

}  // namespace

namespace detail {

std::string PortDirectory(const std::string& device, unsigned port) {
  return JoinPath(JoinPath(JoinPath(kInfinibandClassDir, device), "ports"), std::to_string(port));
}

}  // namespace detail

const std::vector<PmaCounterSpec>& PmaCounterSpecs() {
  // Widths from the IB spec's PortCounters attribute. unicast_*/multicast_* exist only in
  // PortCountersExtended, so they are always 64 bits wide.
  static const std::vector<PmaCounterSpec> specs = {
      {"symbol_error", 16, false, 1},
      {"link_error_recovery", 8, false, 1},
      {"link_downed", 8, false, 1},
      {"port_rcv_errors", 16, false, 1},
      {"port_rcv_remote_physical_errors", 16, false, 1},
      {"port_rcv_switch_relay_errors", 16, false, 1},
      {"port_xmit_discards", 16, false, 1},
      {"port_xmit_constraint_errors", 8, false, 1},
      {"port_rcv_constraint_errors", 8, false, 1},
      {"local_link_integrity_errors", 4, false, 1},
      {"excessive_buffer_overrun_errors", 4, false, 1},
      {"VL15_dropped", 16, false, 1},
      {"port_xmit_wait", 32, false, 1},
      {"port_xmit_data", 32, true, 4},
      {"port_rcv_data", 32, true, 4},
      {"port_xmit_packets", 32, true, 1},
      {"port_rcv_packets", 32, true, 1},
      {"port_rcv_discards", 16, false, 1},
      {"unicast_xmit_packets", 64, false, 1},
      {"unicast_rcv_packets", 64, false, 1},
      {"multicast_xmit_packets", 64, false, 1},
      {"multicast_rcv_packets", 64, false, 1},
  };
  return specs;
}

bool InfinibandPort::IsActive() const {
  return state && state->id == 4 && phys_state && phys_state->id == 5;
}

bool InfinibandPort::IsEthernet() const {
  return link_layer && *link_layer == "Ethernet";
}

std::vector<std::string> ListInfinibandDevices(const Filesystem& sys, ReadErrors& errors) {
  return detail::ListNames(sys, std::string(kInfinibandClassDir), errors, Presence::kOptional);
}

std::vector<InfinibandDevice> ReadInfiniband(const Filesystem& sys,
                                             const InfinibandReadOptions& options,
                                             ReadErrors& errors) {
  std::vector<InfinibandDevice> devices;
  for (const std::string& name : ListInfinibandDevices(sys, errors)) {
    if (options.device_filter && !options.device_filter(name)) continue;
    devices.push_back(ReadDevice(sys, name, options, errors));
  }
  return devices;
}

std::vector<GidEntry> ReadGidTable(const Filesystem& sys, const std::string& device, unsigned port,
                                   ReadErrors& errors) {
  const std::string port_dir = detail::PortDirectory(device, port);
  const std::string gids_dir = JoinPath(port_dir, "gids");
  const std::string types_dir = JoinPath(port_dir, "gid_attrs/types");
  const std::string ndevs_dir = JoinPath(port_dir, "gid_attrs/ndevs");

  std::vector<GidEntry> gids;
  const auto names = detail::ListNames(sys, gids_dir, errors, Presence::kOptional);
  for (const auto& [index, entry] : NumberedEntries(names, gids_dir, errors)) {
    auto gid =
        detail::ReadParsed(sys, JoinPath(gids_dir, entry), errors, Presence::kOptional, ParseGid);
    // Empty slots answer EINVAL for their attributes: do not even ask.
    if (!gid || gid->IsEmpty()) continue;
    GidEntry out;
    out.index = index;
    out.gid = *gid;
    // gid_attrs appeared in Linux 4.9; older kernels simply lack it.
    if (auto type =
            detail::ReadString(sys, JoinPath(types_dir, entry), errors, Presence::kOptional)) {
      out.type = ParseGidType(*type);
    }
    // InfiniBand GIDs have no netdev: the kernel answers ENODEV, which is a fact, not a failure.
    const std::string ndev_path = JoinPath(ndevs_dir, entry);
    std::string ndev;
    const int error = sys.ReadFile(ndev_path, &ndev);
    if (error == 0) {
      if (auto trimmed = TrimValue(ndev); !trimmed.empty()) out.netdev = std::string(trimmed);
    } else if (error != ENOENT && error != ENODEV) {
      errors.AddErrno(ndev_path, error);
    }
    gids.push_back(std::move(out));
  }
  return gids;
}

const PortCounter* BestPortCounter(const InfinibandPort& port, std::string_view file) {
  const auto classic = port.counters.find(file);
  const bool classic_is_wide = classic != port.counters.end() && classic->second.width_bits >= 64;
  if (!classic_is_wide && !port.counters_ext.empty()) {
    for (const auto& [name, ext_name] : kExtendedReplacement) {
      if (name != file) continue;
      if (const auto ext = port.counters_ext.find(ext_name); ext != port.counters_ext.end()) {
        return &ext->second;
      }
      break;
    }
  }
  return classic == port.counters.end() ? nullptr : &classic->second;
}

DataCounterSource PortDataCounterSource(const InfinibandDevice& device,
                                        const InfinibandPort& port) {
  if (const PortCounter* best = BestPortCounter(port, "port_xmit_data")) {
    const auto classic = port.counters.find("port_xmit_data");
    return classic != port.counters.end() && &classic->second == best
               ? DataCounterSource::kCounters
               : DataCounterSource::kCountersExt;
  }
  // A software device's packets all pass through its netdev; a NIC's RDMA traffic does not.
  // Only rxe names its netdev (parent).
  return device.virtual_device && device.parent ? DataCounterSource::kNetdevStatistics
                                                : DataCounterSource::kNone;
}

const char* DataCounterSourceName(DataCounterSource source) {
  switch (source) {
    case DataCounterSource::kCounters:
      return "counters";
    case DataCounterSource::kCountersExt:
      return "counters_ext";
    case DataCounterSource::kNetdevStatistics:
      return "netdev_statistics";
    case DataCounterSource::kNone:
      break;
  }
  return "none";
}

}  // namespace rail::sysfs
