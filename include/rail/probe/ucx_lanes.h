// Which transports and devices a UCX endpoint really uses, read from the text that
// ucp_ep_print_info writes (UCX 1.13 has no ucp_ep_query for transports). Lane lines read, in
// UCX 1.13 (padding shortened):
//
//   #   lane[0]:  0:tcp/ra1.0 md[0]          -> md[0]/tcp/sysdev[255] rma_bw#0 am am_bw#0
//   #   lane[1]:  3:rc_mlx5/mlx5_0:1.0 md[2] -> md[2]/ib/sysdev[0] rma_bw#1 wireup{ud_mlx5/...}
//   #   lane[2]: cm rdmacm
//
// i.e. lane index, resource index, transport/device, ".path index" (absent in older releases),
// local memory domain, optionally "<proxy>" (older releases), "->", the remote memory domain and
// component, then what the lane is used for (rma_bw#prio, am, am_bw#prio, rma#, amo#, tag_offload,
// rkey_ptr, wireup{aux transport/device}).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rail::probe {

struct UcxLane {
  int index = 0;
  bool connection_manager = false;  // a "cm" lane: `transport` is the CM's name, no device
  int resource_index = -1;
  std::string transport;  // e.g. "tcp", "rc_mlx5", "ud_mlx5", "dc_mlx5", "cma"
  std::string device;     // e.g. "ra0", "mlx5_0:1", "memory"
  std::optional<unsigned> path_index;
  int memory_domain = -1;
  std::string remote_component;  // e.g. "tcp", "ib", "self"
  // Usage tokens as printed: "rma_bw#0", "am", "am_bw#1", "wireup{ud_mlx5/mlx5_0:1}", ...
  std::vector<std::string> roles;

  // True when the lane has `role` ("rma_bw", "am", "wireup", ...), whatever its priority.
  bool HasRole(std::string_view role) const;
};

struct UcxEndpointInfo {
  std::string peer;  // "<no debug data>" unless UCX was built with debug data
  std::vector<UcxLane> lanes;
};

struct EpInfoParseOptions {
  // UCX releases that print a path index after the device (1.13 does: "tcp/ra0.0") need it
  // stripped; in older ones a device name such as the VLAN "eth0.100" must be kept whole. The
  // text alone cannot tell "eth0.100" (old) from device "eth0" path 100, so the caller says which.
  bool device_has_path_index = true;
};

// Parses the output of ucp_ep_print_info. Lines other than lane and peer lines (protocol
// thresholds, rma_bw) are skipped. nullopt and `error` (naming the line) on a lane line that does
// not parse, or when no lane line is present at all.
std::optional<UcxEndpointInfo> ParseEpPrintInfo(std::string_view text, std::string* error,
                                                const EpInfoParseOptions& options = {});

// The distinct (transport, device) pairs of the endpoint's data lanes, in lane order: what
// rail_probe_transport_info reports. Connection-manager lanes carry no data and are left out.
std::vector<std::pair<std::string, std::string>> TransportDevices(const UcxEndpointInfo& info);

}  // namespace rail::probe
