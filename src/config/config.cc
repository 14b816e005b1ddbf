#include "rail/config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

namespace rail {
namespace {

[[noreturn]] void Fail(const std::string& source, const std::string& key, const std::string& why) {
  throw ConfigError(source + ": " + key + ": " + why);
}

void RejectUnknownKeys(const YAML::Node& map, const std::set<std::string>& known,
                       const std::string& source, const std::string& prefix) {
  for (const auto& entry : map) {
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

RailConfig ParseRail(const YAML::Node& node, const std::string& source, const std::string& key) {
  if (!node.IsMap()) Fail(source, key, "expected a mapping");
  RejectUnknownKeys(node,
                    {"name", "device", "port", "netdev", "ipv4", "expected_rate_gbps", "transport"},
                    source, key + ".");
  RailConfig rail;
  if (!node["name"]) Fail(source, key + ".name", "missing");
  rail.name = Scalar<std::string>(node["name"], source, key + ".name", "a string");
  if (rail.name.empty()) Fail(source, key + ".name", "must not be empty");
  if (node["device"]) {
    rail.device = Scalar<std::string>(node["device"], source, key + ".device", "a string");
  }
  if (node["port"]) {
    const auto port = Scalar<int>(node["port"], source, key + ".port", "a port number");
    if (port < 1 || port > 255) Fail(source, key + ".port", "must be between 1 and 255");
    rail.port = static_cast<unsigned>(port);
  }
  if (node["netdev"]) {
    rail.netdev = Scalar<std::string>(node["netdev"], source, key + ".netdev", "a string");
  }
  if (node["ipv4"]) {
    rail.ipv4 = Scalar<std::string>(node["ipv4"], source, key + ".ipv4", "an IPv4 address");
  }
  if (node["expected_rate_gbps"]) {
    const auto rate = Scalar<double>(node["expected_rate_gbps"], source,
                                     key + ".expected_rate_gbps", "a number");
    if (!(rate > 0)) Fail(source, key + ".expected_rate_gbps", "must be positive");
    rail.expected_rate_gbps = rate;
  }
  if (node["transport"]) {
    const auto transport =
        Scalar<std::string>(node["transport"], source, key + ".transport", "rdma or tcp");
    if (transport == "rdma") {
      rail.transport = TransportClass::kRdma;
    } else if (transport == "tcp") {
      rail.transport = TransportClass::kTcp;
    } else {
      Fail(source, key + ".transport", "expected rdma or tcp, got '" + transport + "'");
    }
  }
  if (!rail.device && !rail.netdev) {
    Fail(source, key, "needs a device (RDMA port) or a netdev");
  }
  return rail;
}

}  // namespace

AgentConfig ParseConfig(std::string_view yaml_text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& error) {
    throw ConfigError(source + ": not valid YAML: " + error.what());
  }
  AgentConfig config;
  if (root.IsNull()) return config;  // an empty file is an empty configuration
  if (!root.IsMap()) Fail(source, "(top level)", "expected a mapping");
  RejectUnknownKeys(root, {"rails", "discover_rails"}, source, "");

  if (const auto discover = root["discover_rails"]) {
    config.discover_rails = Scalar<bool>(discover, source, "discover_rails", "true or false");
  }
  if (const auto rails = root["rails"]) {
    if (!rails.IsSequence()) Fail(source, "rails", "expected a list");
    std::set<std::string> names;
    for (std::size_t i = 0; i < rails.size(); ++i) {
      const std::string key = "rails[" + std::to_string(i) + "]";
      auto rail = ParseRail(rails[i], source, key);
      if (!names.insert(rail.name).second) {
        Fail(source, key + ".name", "duplicate rail name '" + rail.name + "'");
      }
      config.rails.push_back(std::move(rail));
    }
  }
  return config;
}

AgentConfig LoadConfigFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw ConfigError(path + ": cannot be read");
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw ConfigError(path + ": read error");
  return ParseConfig(text.str(), path);
}

}  // namespace rail
