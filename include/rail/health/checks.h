// Rail health checks: the answers an operator acts on, derived from what a scrape read and from
// the latest probe results. Pure functions over structs (no file or clock access), so that every
// check is unit-tested on fixture trees; the health collector and the landing page both call
// EvaluateChecks and HealthLog turns changes into log lines.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "rail/config.h"
#include "rail/probe/result_store.h"
#include "rail/rails.h"
#include "rail/sysfs/infiniband.h"
#include "rail/sysfs/netclass.h"

namespace rail::health {

// An IPv4 address configured on an interface (getifaddrs in production, literals in tests).
struct InterfaceAddress {
  std::string ifname;
  std::string address;  // dotted quad
  unsigned prefix_length = 32;
};

// Everything the checks look at. Pointers are never null; empty vectors are fine.
struct HealthInputs {
  const std::vector<Rail>* rails = nullptr;
  const std::vector<sysfs::InfinibandDevice>* devices = nullptr;
  const std::vector<sysfs::NetDevice>* net_devices = nullptr;
  const std::vector<sysfs::Bond>* bonds = nullptr;
  const std::vector<InterfaceAddress>* addresses = nullptr;
  const std::vector<probe::SeriesState>* probe_series = nullptr;
  const AgentConfig* config = nullptr;
  std::string own_agent_version;
  std::string own_ucx_version;
  // Whether a series' last result is still current (ResultStore::IsCurrent). The probe-derived
  // checks (multirail_striping, probe_throughput, transport_fallback) skip stale series; the peer
  // checks use each peer's latest result however old. Empty: every series is current.
  std::function<bool(const probe::SeriesState&)> is_current;
};

// One verdict: rail_check_ok{check,rail,peer} and, while failing,
// rail_check_info{check,rail,peer,reason}. Check tokens (stable, used by the alert rules):
//   port_active, port_rate, roce_gid, duplicate_subnet, mtu, peer_mtu, peer_version,
//   counter_saturated, multirail_striping, probe_throughput, transport_fallback
struct CheckResult {
  std::string check;  // one of the tokens above
  std::string rail;   // the rail label; "" for host-wide checks
  std::string peer;   // the peer label for checks about a peer; "" otherwise
  bool ok = true;
  std::string reason;  // for people; empty when ok
  auto operator<=>(const CheckResult&) const = default;
};

// Every check, for every rail it applies to, in a stable order (check, then rail).
std::vector<CheckResult> EvaluateChecks(const HealthInputs& inputs);

// The IPv4 addresses of this network namespace's interfaces.
std::vector<InterfaceAddress> ReadInterfaceAddresses();

// Logs a line when a check's verdict or reason changes (first evaluation: only failures), e.g.
//   check changed check=roce_gid rail=rail0 peer= ok=false reason="..."
// at warning level for a failure and info for a recovery. A verdict that disappears (a rail or
// peer gone) is forgotten silently.
class HealthLog {
 public:
  void Observe(const std::vector<CheckResult>& results);

 private:
  std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, std::string>, CheckResult> last_;
  bool first_ = true;
};

}  // namespace rail::health
