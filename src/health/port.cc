// port_active and port_rate: the rail's port is up, at the rate configured for it.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"

namespace rail::health::detail {
namespace {

std::string StateName(const std::optional<sysfs::NumberedState>& state) {
  return state ? state->name : "unknown";
}

std::string PortName(const inventory::Rail& rail) {
  return fmt::format("{} port {}", rail.device, rail.port);
}

std::string PortActiveReason(const HealthInputs& inputs, const inventory::Rail& rail) {
  if (!rail.device.empty()) {
    const auto* port = FindPort(inputs, rail);
    if (!rail.present || port == nullptr) {
      return fmt::format("{} not found under class/infiniband", PortName(rail));
    }
    if (port->IsActive()) return {};
    return fmt::format("{} is {} / {} (ports/{}/state, phys_state), expected ACTIVE / LinkUp",
                       PortName(rail), StateName(port->state), StateName(port->phys_state),
                       rail.port);
  }
  if (rail.netdev.empty()) return {};
  // A netdev-only rail (TCP, the lab's veths): its operstate stands in for the port state.
  const auto* netdev = FindNetDevice(inputs, rail.netdev);
  if (netdev == nullptr) return fmt::format("netdev {} not found under class/net", rail.netdev);
  // "unknown" is what drivers without operstate support (and some virtual devices) report.
  if (netdev->operstate && *netdev->operstate != "up" && *netdev->operstate != "unknown") {
    return fmt::format("netdev {} is {} (class/net/{}/operstate)", rail.netdev, *netdev->operstate,
                       rail.netdev);
  }
  return {};
}

// Only a configured expectation is checked: the rates of a host's ports differ legitimately
// (a management port next to the rails), so sibling rates are no reference.
std::string PortRateReason(const HealthInputs& inputs, const inventory::Rail& rail) {
  if (!rail.expected_rate_gbps) return {};
  const double expected = *rail.expected_rate_gbps;
  if (!rail.device.empty()) {
    const auto* port = FindPort(inputs, rail);
    if (port == nullptr || !port->rate) return {};
    if (port->rate->gigabits_per_second >= expected) return {};
    return fmt::format(
        "{} runs at {:g} Gb/s{} (ports/{}/rate), below the expected {:g} Gb/s", PortName(rail),
        port->rate->gigabits_per_second,
        port->rate->width_and_speed.empty() ? "" : " (" + port->rate->width_and_speed + ")",
        rail.port, expected);
  }
  const auto* netdev = FindNetDevice(inputs, rail.netdev);
  if (netdev == nullptr || !netdev->speed_mbps || *netdev->speed_mbps <= 0) return {};
  const double gbps = static_cast<double>(*netdev->speed_mbps) / 1000;
  if (gbps >= expected) return {};
  return fmt::format(
      "netdev {} runs at {:g} Gb/s (class/net/{}/speed), below the expected {:g} Gb/s", rail.netdev,
      gbps, rail.netdev, expected);
}

}  // namespace

void CheckPorts(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto& rail : Rails(inputs)) {
    out.push_back(Verdict("port_active", rail.name, "", PortActiveReason(inputs, rail)));
    out.push_back(Verdict("port_rate", rail.name, "", PortRateReason(inputs, rail)));
  }
}

}  // namespace rail::health::detail
