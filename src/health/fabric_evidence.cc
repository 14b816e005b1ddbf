#include "health/fabric_evidence.h"

#include <spdlog/fmt/fmt.h>

#include <chrono>

#include "health/check_helpers.h"

namespace rail::health::detail {
namespace {

std::string FabricKey(const std::string& rail, const std::string& netdev,
                      const std::string& statistic) {
  return "ethtool/" + rail + "/" + netdev + "/" + statistic;
}

std::string CarrierKey(const std::string& rail, const std::string& netdev) {
  return "carrier_down_count/" + rail + "/" + netdev;
}

std::string PortKey(const std::string& rail, const std::string& directory,
                    const std::string& file) {
  return directory + "/" + rail + "/" + file;
}

std::optional<CounterDelta> Lookup(const HealthInputs& inputs, const std::string& key) {
  if (inputs.history == nullptr) return std::nullopt;
  return inputs.history->Delta(key, inputs.thresholds.fabric_window);
}

}  // namespace

void ObserveFabric(const HealthInputs& inputs, base::TimePoint now, CounterHistory& history) {
  const auto window = inputs.thresholds.fabric_window;
  if (inputs.fabric != nullptr) {
    for (const auto& [rail, reading] : *inputs.fabric) {
      for (const auto& sample : reading.samples) {
        history.Observe(FabricKey(rail, reading.netdev, sample.source), now, sample.value, window);
      }
    }
  }
  for (const auto& rail : Rails(inputs)) {
    if (const auto* netdev = FindNetDevice(inputs, rail.netdev);
        netdev != nullptr && netdev->carrier_down_count) {
      history.Observe(CarrierKey(rail.name, rail.netdev), now, *netdev->carrier_down_count, window);
    }
    const auto* port = FindPort(inputs, rail);
    if (port == nullptr) continue;
    if (const auto* downed = sysfs::BestPortCounter(*port, "link_downed");
        downed != nullptr && !downed->saturated) {
      history.Observe(PortKey(rail.name, "counters", "link_downed"), now, downed->value, window);
    }
    for (const char* file : kRoceHwCounters) {
      if (const auto found = port->hw_counters.find(file); found != port->hw_counters.end()) {
        history.Observe(PortKey(rail.name, "hw_counters", file), now, found->second, window);
      }
    }
  }
}

std::optional<CounterDelta> SampleDelta(const HealthInputs& inputs, const std::string& rail,
                                        const nic::FabricReading& reading,
                                        const nic::FabricSample& sample) {
  return Lookup(inputs, FabricKey(rail, reading.netdev, sample.source));
}

std::optional<CounterDelta> CarrierDownDelta(const HealthInputs& inputs, const std::string& rail,
                                             const std::string& netdev) {
  return Lookup(inputs, CarrierKey(rail, netdev));
}

std::optional<CounterDelta> PortCounterDelta(const HealthInputs& inputs, const std::string& rail,
                                             const std::string& file) {
  return Lookup(inputs, PortKey(rail, "counters", file));
}

std::optional<CounterDelta> HwCounterDelta(const HealthInputs& inputs, const std::string& rail,
                                           const std::string& file) {
  return Lookup(inputs, PortKey(rail, "hw_counters", file));
}

std::vector<const nic::FabricReading*> RailReadings(const HealthInputs& inputs,
                                                    const std::string& rail) {
  std::vector<const nic::FabricReading*> readings;
  if (inputs.fabric == nullptr) return readings;
  for (const auto& fabric : *inputs.fabric) {
    if (fabric.rail == rail) readings.push_back(&fabric.reading);
  }
  return readings;
}

std::string SpanText(base::Duration span) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(span).count();
  if (seconds >= 60 && seconds % 60 == 0) return fmt::format("{}m", seconds / 60);
  return fmt::format("{}s", seconds);
}

}  // namespace rail::health::detail
