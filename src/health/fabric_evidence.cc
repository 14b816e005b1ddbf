#include "health/fabric_evidence.h"

#include <spdlog/fmt/fmt.h>

#include <chrono>

#include "health/check_helpers.h"
#include "rail/probe/fabric_evidence.h"

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

base::Duration RunSpan(const probe::RailFabricEvidence& evidence) {
  return std::chrono::duration_cast<base::Duration>(
      std::chrono::duration<double>(evidence.seconds));
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
    for (const char* file : probe::kFabricHwCounters) {
      if (const auto found = port->hw_counters.find(file); found != port->hw_counters.end()) {
        history.Observe(PortKey(rail.name, "hw_counters", file), now, found->second, window);
      }
    }
  }
}

std::optional<CounterDelta> RailRises::Rise(const nic::FabricReading& reading,
                                            nic::FabricCounter counter,
                                            const nic::FabricSample** found) const {
  *found = nic::FindSample(reading, counter);
  return *found ? Sample(reading, **found) : std::nullopt;
}

void RailRises::EachRise(nic::FabricCounter counter, const EachRiseFunction& each) const {
  for (const auto* reading : readings_) {
    const nic::FabricSample* sample = nullptr;
    if (const auto rise = Rise(*reading, counter, &sample)) each(*reading, *sample, *rise);
  }
}

RailRises WindowRises(const HealthInputs& inputs, const inventory::Rail& rail) {
  std::vector<const nic::FabricReading*> readings;
  if (inputs.fabric != nullptr) {
    for (const auto& fabric : *inputs.fabric) {
      if (fabric.rail == rail.name) readings.push_back(&fabric.reading);
    }
  }
  const auto lookup = [&inputs](const std::string& key) -> std::optional<CounterDelta> {
    if (inputs.history == nullptr) return std::nullopt;
    return inputs.history->Delta(key, inputs.thresholds.fabric_window);
  };
  return RailRises(
      std::move(readings),
      [lookup, name = rail.name](const nic::FabricReading& reading,
                                 const nic::FabricSample& sample) {
        return lookup(FabricKey(name, reading.netdev, sample.source));
      },
      [lookup, name = rail.name, netdev = rail.netdev](const std::string& path) {
        if (path == "carrier_down_count") {
          return netdev.empty() ? std::nullopt : lookup(CarrierKey(name, netdev));
        }
        const auto slash = path.find('/');
        return lookup(PortKey(name, path.substr(0, slash), path.substr(slash + 1)));
      },
      [](const CounterDelta& rise) { return "the last " + SpanText(rise.span); }, rail.netdev,
      rail.device.empty() ? "" : rail.device + " port " + std::to_string(rail.port));
}

RailRises RunRises(const probe::RailFabricEvidence& evidence, std::string netdev,
                   std::string port) {
  std::vector<const nic::FabricReading*> readings;
  for (const auto& reading : evidence.nic) readings.push_back(&reading);
  const base::Duration span = RunSpan(evidence);
  return RailRises(
      std::move(readings),
      // The evidence's samples hold their rises.
      [span](const nic::FabricReading&, const nic::FabricSample& sample) {
        return std::optional(CounterDelta{static_cast<double>(sample.value), span});
      },
      [&evidence, span](const std::string& path) -> std::optional<CounterDelta> {
        const auto found = evidence.counters.find(path);
        if (found == evidence.counters.end()) return std::nullopt;
        return CounterDelta{static_cast<double>(found->second), span};
      },
      [](const CounterDelta&) { return std::string("the run"); }, std::move(netdev),
      std::move(port));
}

std::string SpanText(base::Duration span) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(span).count();
  if (seconds >= 60 && seconds % 60 == 0) return fmt::format("{}m", seconds / 60);
  return fmt::format("{}s", seconds);
}

}  // namespace rail::health::detail
