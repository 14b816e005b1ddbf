// The landing page's fabric column: per rail, what each fabric check (health/, judged on the NIC's
// counters over health.fabric_window and on its temperature) says now: ok, failing, or no verdict
// yet, told apart from counters that were never read, so that an empty verdict never reads as a
// pass.
#include <algorithm>

#include "rail/web/landing_page.h"

namespace rail::web {
namespace {

struct FabricColumn {
  const char* check;
  const char* label;
  bool temperature;  // judged on the NIC's hwmon sensor rather than its counters
};

constexpr FabricColumn kColumns[] = {
    {"pfc_pause", "pause", false},
    {"pfc_storm", "storms", false},
    {"roce_congestion_control", "ECN/CNP", false},
    {"roce_drops", "drops", false},
    {"link_flaps", "flaps", false},
    {"link_errors", "FEC", false},
    {"nic_temperature", "temp", true},
};

}  // namespace

std::vector<LandingFabricCheck> BuildLandingFabric(
    const std::string& rail, const std::vector<health::CheckResult>& checks,
    const std::vector<inventory::RailFabric>& fabric,
    const std::vector<inventory::RailTemperature>& temperatures) {
  const bool counters_read = std::any_of(fabric.begin(), fabric.end(), [&](const auto& one) {
    return one.rail == rail && one.reading.known_driver;
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
      const bool read = column.temperature ? temperature_read : counters_read;
      state.state = read ? "no verdict" : "not read";
    }
    states.push_back(std::move(state));
  }
  return states;
}

}  // namespace rail::web
