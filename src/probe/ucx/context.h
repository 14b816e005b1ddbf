// A UCP context restricted to the devices and transports of one probe side. Which devices and
// transports a side may use is only ever restricted here, never by branching on the transport:
// the same code drives tcp on lab veths and rc_mlx5 on a ConnectX port.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probe/ucx/handles.h"
#include "rail/probe/result.h"

namespace rail::probe {

struct UcxContextSpec {
  std::vector<std::string> net_devices;  // UCX_NET_DEVICES, e.g. {"mlx5_0:1"} or {"ra0"}
  std::string transports;                // UCX_TLS; empty = UCX default
  unsigned max_rndv_rails = 1;           // UCX_MAX_RNDV_RAILS
  // Any other UCX setting, by its name with or without the "UCX_" prefix, e.g.
  // {"MAX_EAGER_RAILS", "2"}; applied after the fields above, so it may override them.
  std::map<std::string, std::string> extra_config;
};

namespace detail {

// The UCX settings `spec` stands for, by name without the "UCX_" prefix, in the order they are
// applied (later ones win).
std::vector<std::pair<std::string, std::string>> UcxSettings(const UcxContextSpec& spec);

// A context with features RMA|TAG|AM|WAKEUP for one worker and one endpoint, configured by
// the environment's UCX_* variables overridden by `spec`. An empty context and the reason
// ("ucx:<status>") and a message naming what failed, on failure.
UcxContext CreateUcxContext(const UcxContextSpec& spec, std::string* error_reason,
                            std::string* error_message);

// A context over `rails`: their ucx_devices, `transports` (kUcxDefaultTransports when empty), and
// with several rails MAX_RNDV_RAILS and MAX_EAGER_RAILS = their number (UCX 1.13's tcp has no
// zero-copy RMA lanes, so its rendezvous runs over the AM bandwidth lanes that MAX_EAGER_RAILS
// counts; on RDMA transports MAX_RNDV_RAILS adds the rma_bw lanes).
UcxContextSpec UcxSpecFor(const std::vector<ProbeRail>& rails, const std::string& transports);

// Whether the context's transports take memory of `type` (ucp_context_query's memory types;
// Debian's UCX 1.13 is built without CUDA and answers host only).
bool UcxTakesMemoryType(ucp_context_h context, ucs_memory_type_t type);

}  // namespace detail

}  // namespace rail::probe
