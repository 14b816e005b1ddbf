// nic_temperature: a sensor of the rail's NIC (its hwmon device) within
// nic_temperature_margin_celsius of that sensor's critical temperature. Not windowed: a
// temperature is a state. No verdict where the NIC has no hwmon device (kernels before mlx5
// registered one, such as Debian 12's 6.1).
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"

namespace rail::health::detail {

void CheckNicTemperature(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  if (inputs.nic_temperatures == nullptr) return;
  const double margin = inputs.thresholds.nic_temperature_margin_celsius;
  for (const auto& rail : Rails(inputs)) {
    bool judged = false;
    std::vector<std::string> hot;
    for (const auto& [name, hwmon, sensor] : *inputs.nic_temperatures) {
      if (name != rail.name || !sensor.celsius || !sensor.critical_celsius) continue;
      judged = true;
      if (*sensor.celsius < *sensor.critical_celsius - margin) continue;
      hot.push_back(fmt::format("{} {}{} at {:.1f} °C, critical {:.1f} °C", hwmon, sensor.sensor,
                                sensor.label ? " (" + *sensor.label + ")" : std::string(),
                                *sensor.celsius, *sensor.critical_celsius));
    }
    if (!judged) continue;
    out.push_back(Verdict(
        "nic_temperature", rail.name, "",
        hot.empty() ? std::string()
                    : fmt::format("{} (within {:.0f} °C): check the airflow over the NIC and its "
                                  "transceivers (ethtool -m shows the module's temperature)",
                                  Join(hot, "; "), margin)));
  }
}

}  // namespace rail::health::detail
