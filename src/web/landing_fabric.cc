// The landing page's fabric column: per rail, what each fabric check (health/, judged on the NIC's
// counters and the RDMA port's hw_counters over health.fabric_window, and on the NIC's temperature)
// says now: ok, failing, or no verdict yet, told apart from counters that were never read, so that
// an empty verdict never reads as a pass.
#include <algorithm>

#include "rail/web/landing_page.h"

namespace rail::web {
namespace {

// Where a check's evidence comes from, which decides "no verdict" against "not read".
enum class Evidence {
  kNicCounters,  // the NIC's ethtool statistics
  kRdmaPort,     // the RDMA port's hw_counters
  kTemperature,  // the NIC's hwmon sensor
};

struct FabricColumn {
  const char* check;
  const char* label;
  Evidence evidence;
};

constexpr FabricColumn kColumns[] = {
    {"pfc_pause", "pause", Evidence::kNicCounters},
    {"global_pause", "802.3x", Evidence::kNicCounters},
    {"pfc_storm", "storms", Evidence::kNicCounters},
    {"roce_congestion_control", "ECN/CNP", Evidence::kRdmaPort},
    {"roce_drops", "drops", Evidence::kNicCounters},
    {"port_discards", "discards", Evidence::kNicCounters},
    {"host_receive_starvation", "host rx", Evidence::kNicCounters},
    {"roce_retransmissions", "retx", Evidence::kRdmaPort},
    {"link_flaps", "flaps", Evidence::kNicCounters},
    {"link_errors", "FEC", Evidence::kNicCounters},
    {"nic_temperature", "temp", Evidence::kTemperature},
};

bool Judged(const std::vector<health::CheckResult>& checks, const std::string& check,
            const std::string& rail) {
  return std::any_of(checks.begin(), checks.end(), [&](const health::CheckResult& verdict) {
    return verdict.check == check && verdict.rail == rail;
  });
}

}  // namespace

std::vector<LandingFabricCheck> BuildLandingFabric(
    const std::string& rail, const std::vector<health::CheckResult>& checks,
    const std::vector<inventory::RailFabric>& fabric,
    const std::vector<inventory::RailTemperature>& temperatures) {
  // Read: a NIC with an allow-list that listed statistics. One that lists none (EOPNOTSUPP, an
  // empty dump, "no stats available") gives its checks no evidence, as if it had not been read.
  const bool counters_read = std::any_of(fabric.begin(), fabric.end(), [&](const auto& one) {
    return one.rail == rail && one.reading.known_driver && !one.reading.no_statistics;
  });
  // The RDMA port's hw_counters were read when a check judged on them has a verdict for the rail
  // (or, as before, when the NIC's were: the two are read by the same scrape).
  const bool port_read =
      counters_read || std::any_of(std::begin(kColumns), std::end(kColumns), [&](const auto& one) {
        return one.evidence == Evidence::kRdmaPort && Judged(checks, one.check, rail);
      });
  const bool temperature_read = std::any_of(temperatures.begin(), temperatures.end(),
                                            [&](const auto& one) { return one.rail == rail; });
  std::vector<LandingFabricCheck> states;
  for (const auto& column : kColumns) {
    LandingFabricCheck state{column.check, column.label, ""};
    // A check may judge one rail against several peers; any failing verdict fails it here.
    bool judged = false;
    bool failing = false;
    for (const auto& verdict : checks) {
      if (verdict.check != column.check || verdict.rail != rail) continue;
      judged = true;
      failing = failing || !verdict.ok;
    }
    if (judged) {
      state.state = failing ? "failing" : "ok";
    } else {
      bool read = counters_read;
      if (column.evidence == Evidence::kRdmaPort) read = port_read;
      if (column.evidence == Evidence::kTemperature) read = temperature_read;
      state.state = read ? "no verdict" : "not read";
    }
    states.push_back(std::move(state));
  }
  return states;
}

}  // namespace rail::web
