// Reading fields of the agent's YAML configuration: the checks and the error messages
// ("<source>: <key>: <why>") that every section shares. Internal to the agent layer.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "rail/agent/config.h"

namespace rail::agent::detail {

[[noreturn]] inline void Fail(const std::string& source, const std::string& key,
                              const std::string& why) {
  throw ConfigError(source + ": " + key + ": " + why);
}

inline void RejectUnknownKeys(const YAML::Node& map, const std::set<std::string>& known,
                              const std::string& source, const std::string& prefix) {
  for (const auto& entry : map) {
    // YAML allows any node as a key ("{[a]: 1}"); as<std::string>() would throw yaml-cpp's own
    // exception, which names no key.
    if (entry.first.IsSequence() || entry.first.IsMap()) {
      Fail(source, prefix.empty() ? "(top level)" : prefix.substr(0, prefix.size() - 1),
           "expected plain keys, got a list or a mapping as a key");
    }
    const auto key = entry.first.as<std::string>();
    if (!known.contains(key)) Fail(source, prefix + key, "unknown key");
  }
}

template <typename T>
T Scalar(const YAML::Node& node, const std::string& source, const std::string& key,
         const char* expected) {
  if (!node.IsScalar()) Fail(source, key, std::string("expected ") + expected);
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    Fail(source, key, std::string("expected ") + expected + ", got '" + node.Scalar() + "'");
  }
}

template <typename T>
T Positive(const YAML::Node& node, const std::string& source, const std::string& key) {
  const auto value = Scalar<T>(node, source, key, "a positive number");
  if (!(value > 0)) Fail(source, key, "must be positive");
  return value;
}

inline std::vector<std::string> StringList(const YAML::Node& node, const std::string& source,
                                           const std::string& key) {
  if (!node.IsSequence()) Fail(source, key, "expected a list");
  std::vector<std::string> values;
  for (std::size_t i = 0; i < node.size(); ++i) {
    values.push_back(
        Scalar<std::string>(node[i], source, key + "[" + std::to_string(i) + "]", "a string"));
  }
  return values;
}

// A positive duration ("500ms", "2s", "5m", "1h").
std::chrono::milliseconds DurationValue(const YAML::Node& node, const std::string& source,
                                        const std::string& key);

// The probes[] section (config_probes.cc).
std::vector<ProbeConfig> ParseProbes(const YAML::Node& node, const std::string& source);
// The health section (config_health.cc).
void ParseHealth(const YAML::Node& node, const std::string& source, health::Thresholds& out);
// The figures section (config_figures.cc).
void ParseFigures(const YAML::Node& node, const std::string& source, probe::FigureLimits& out);
// The fleet section (config_fleet.cc).
FleetConfig ParseFleet(const YAML::Node& node, const std::string& source);

}  // namespace rail::agent::detail
