#include "health/fabric_evidence.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
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

bool ObserveFabric(const HealthInputs& inputs, std::uint64_t readings_before, base::TimePoint now,
                   base::Duration spacing, CounterHistory& history) {
  // Looked at before the reading is built (a scrape's ~500 keys); a reading recorded since is
  // caught by Record(), by readings_before.
  if (const auto latest = history.LatestReadingAt(); latest && now - *latest < spacing) {
    return false;
  }
  CounterReading reading;
  if (inputs.fabric != nullptr) {
    for (const auto& [rail, fabric] : *inputs.fabric) {
      for (const auto& sample : fabric.samples) {
        reading.emplace_back(FabricKey(rail, fabric.netdev, sample.source), sample.value);
      }
    }
  }
  for (const auto& rail : Rails(inputs)) {
    if (const auto* netdev = FindNetDevice(inputs, rail.netdev);
        netdev != nullptr && netdev->carrier_down_count) {
      reading.emplace_back(CarrierKey(rail.name, rail.netdev), *netdev->carrier_down_count);
    }
    const auto* port = FindPort(inputs, rail);
    if (port == nullptr) continue;
    if (const auto* downed = sysfs::BestPortCounter(*port, kSampledPortCounter);
        downed != nullptr && !downed->saturated) {
      reading.emplace_back(PortKey(rail.name, "counters", std::string(kSampledPortCounter)),
                           downed->value);
    }
    for (const std::string_view file : nic::FabricHwCounterFiles()) {
      if (const auto found = port->hw_counters.find(std::string(file));
          found != port->hw_counters.end()) {
        reading.emplace_back(PortKey(rail.name, "hw_counters", found->first), found->second);
      }
    }
  }
  return history.Record(readings_before, now, reading, inputs.thresholds.fabric_window);
}

base::Duration ScrapeReadingSpacing(const Thresholds& thresholds) {
  return std::max(base::Duration::zero(), thresholds.fabric_sample_interval / 2);
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

void RailRises::EachSampleRise(nic::FabricCounter counter, const EachRiseFunction& each) const {
  for (const auto* reading : readings_) {
    for (const auto& sample : reading->samples) {
      if (sample.counter != counter) continue;
      if (const auto rise = Sample(*reading, sample)) each(*reading, sample, *rise);
    }
  }
}

RailRises::Rail RailNames(const HealthInputs& inputs, const inventory::Rail& rail) {
  RailRises::Rail names;
  names.netdev = rail.netdev;
  if (!rail.device.empty()) names.port = rail.device + " port " + std::to_string(rail.port);
  if (const auto bytes = LineRate(inputs, rail.name)) names.line_bits_per_second = *bytes * 8;
  return names;
}

void CheckWindowed(const HealthInputs& inputs, const char* check, Rule rule,
                   const std::function<std::string(const std::string& faults)>& advice,
                   std::vector<CheckResult>& out, bool ethernet_only) {
  for (const auto& rail : Rails(inputs)) {
    if (ethernet_only && rail.link_layer != "Ethernet") continue;
    const auto found = rule(WindowRises(inputs, rail), inputs.thresholds);
    if (!found.judged) continue;
    out.push_back(Verdict(check, rail.name, "",
                          found.faults.empty() ? std::string() : advice(Join(found.faults, "; "))));
  }
}

double PerSecond(const CounterDelta& rise) {
  const double seconds = std::chrono::duration<double>(rise.span).count();
  return seconds > 0 ? rise.increase / seconds : 0;
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
      [](const CounterDelta& rise) { return "the last " + SpanText(rise.span); },
      RailNames(inputs, rail));
}

RailRises RunRises(const probe::RailFabricEvidence& evidence, RailRises::Rail rail) {
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
      [](const CounterDelta&) { return std::string("the run"); }, std::move(rail));
}

std::string SpanText(base::Duration span) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(span).count();
  if (seconds >= 60 && seconds % 60 == 0) return fmt::format("{}m", seconds / 60);
  return fmt::format("{}s", seconds);
}

}  // namespace rail::health::detail
