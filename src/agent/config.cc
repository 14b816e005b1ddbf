#include "rail/agent/config.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <type_traits>

#include "agent/config_yaml.h"
#include "rail/peer/allow_list.h"
#include "rail/peer/connection.h"
#include "rail/peer/session_messages.h"

namespace rail::agent {
namespace {

using detail::DurationValue;
using detail::Fail;
using detail::Positive;
using detail::RejectUnknownKeys;
using detail::Scalar;
using detail::StringList;

inventory::TransportClass Transport(const YAML::Node& node, const std::string& source,
                                    const std::string& key) {
  const auto transport = Scalar<std::string>(node, source, key, "rdma or tcp");
  if (transport == "rdma") return inventory::TransportClass::kRdma;
  if (transport == "tcp") return inventory::TransportClass::kTcp;
  Fail(source, key, "expected rdma or tcp, got '" + transport + "'");
}

inventory::RailConfig ParseRail(const YAML::Node& node, const std::string& source,
                                const std::string& key) {
  if (!node.IsMap()) Fail(source, key, "expected a mapping");
  RejectUnknownKeys(node,
                    {"name", "device", "port", "netdev", "ipv4", "expected_rate_gbps", "transport"},
                    source, key + ".");
  inventory::RailConfig rail;
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
    const auto rate =
        Scalar<double>(node["expected_rate_gbps"], source, key + ".expected_rate_gbps", "a number");
    if (!(rate > 0)) Fail(source, key + ".expected_rate_gbps", "must be positive");
    rail.expected_rate_gbps = rate;
  }
  if (node["transport"]) {
    rail.transport = Transport(node["transport"], source, key + ".transport");
  }
  if (!rail.device && !rail.netdev) {
    Fail(source, key, "needs a device (RDMA port) or a netdev");
  }
  return rail;
}

std::vector<inventory::RailConfig> ParseRails(const YAML::Node& node, const std::string& source) {
  if (!node.IsSequence()) Fail(source, "rails", "expected a list");
  std::vector<inventory::RailConfig> rails;
  std::set<std::string> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string key = "rails[" + std::to_string(i) + "]";
    auto rail = ParseRail(node[i], source, key);
    if (!names.insert(rail.name).second) {
      Fail(source, key + ".name", "duplicate rail name '" + rail.name + "'");
    }
    rails.push_back(std::move(rail));
  }
  return rails;
}

std::vector<std::string> AllowedNetworks(const YAML::Node& node, const std::string& source) {
  auto networks = StringList(node, source, "responder.allowed_networks");
  for (std::size_t i = 0; i < networks.size(); ++i) {
    std::string error;
    if (!peer::ParseNetwork(networks[i], &error)) {
      Fail(source, "responder.allowed_networks[" + std::to_string(i) + "]", error);
    }
  }
  if (networks.empty()) {
    // An empty list would read as "nobody" but mean "everybody": refuse the ambiguity.
    Fail(source, "responder.allowed_networks", "empty; leave the key out to accept every network");
  }
  return networks;
}

void ParseResponderLimits(const YAML::Node& limits, const std::string& source, peer::Limits& out) {
  const std::string prefix = "responder.limits.";
  if (!limits.IsMap()) Fail(source, "responder.limits", "expected a mapping");
  RejectUnknownKeys(limits,
                    {"max_frame_bytes", "max_concurrent_sessions", "max_connections_per_ip",
                     "max_bytes_per_probe", "max_seconds_per_probe", "probes_per_minute_per_peer",
                     "probe_burst_per_peer", "max_served_bulk_time_fraction_per_rail",
                     "max_served_bytes_per_hour"},
                    source, prefix);
  // Each limit is read into the field of its own type, under its own key.
  const auto read = [&](const char* key, auto& field) {
    if (limits[key]) {
      field = Positive<std::remove_reference_t<decltype(field)>>(limits[key], source, prefix + key);
    }
  };
  read("max_frame_bytes", out.max_frame_bytes);
  read("max_concurrent_sessions", out.max_concurrent_sessions);
  read("max_connections_per_ip", out.max_connections_per_ip);
  read("max_bytes_per_probe", out.max_bytes_per_probe);
  read("max_seconds_per_probe", out.max_seconds_per_probe);
  read("probes_per_minute_per_peer", out.probes_per_minute_per_peer);
  read("probe_burst_per_peer", out.probe_burst_per_peer);
  read("max_served_bulk_time_fraction_per_rail", out.max_served_bulk_time_fraction_per_rail);
  read("max_served_bytes_per_hour", out.max_served_bytes_per_hour);
  if (out.max_served_bulk_time_fraction_per_rail > 1) {
    Fail(source, prefix + "max_served_bulk_time_fraction_per_rail", "at most 1 (all of the hour)");
  }
}

void ParseResponder(const YAML::Node& node, const std::string& source, ResponderConfig& out) {
  if (!node.IsMap()) Fail(source, "responder", "expected a mapping");
  out.listen_address = ":" + std::to_string(peer::kDefaultResponderPort);
  RejectUnknownKeys(
      node, {"listen_address", "secret_file", "insecure", "limits", "allowed_networks", "name"},
      source, "responder.");
  if (node["listen_address"]) {
    out.listen_address = Scalar<std::string>(node["listen_address"], source,
                                             "responder.listen_address", "host:port");
  }
  if (node["secret_file"]) {
    out.secret_file =
        Scalar<std::string>(node["secret_file"], source, "responder.secret_file", "a path");
  }
  if (node["insecure"]) {
    out.insecure = Scalar<bool>(node["insecure"], source, "responder.insecure", "true or false");
  }
  if (node["allowed_networks"]) {
    out.allowed_networks = AllowedNetworks(node["allowed_networks"], source);
  }
  if (node["name"]) {
    out.name = Scalar<std::string>(node["name"], source, "responder.name", "a name");
    if (out.name.empty() || out.name.size() > peer::kMaxAgentNameBytes) {
      Fail(source, "responder.name", "must be 1 to 255 bytes");
    }
  }
  if (const auto limits = node["limits"]) ParseResponderLimits(limits, source, out.limits);
}

PeerConfig ParsePeer(const YAML::Node& node, const std::string& source, const std::string& key) {
  if (!node.IsMap()) Fail(source, key, "expected a mapping");
  RejectUnknownKeys(node, {"name", "address"}, source, key + ".");
  PeerConfig peer;
  if (!node["name"]) Fail(source, key + ".name", "missing");
  if (!node["address"]) Fail(source, key + ".address", "missing");
  peer.name = Scalar<std::string>(node["name"], source, key + ".name", "a string");
  peer.address = Scalar<std::string>(node["address"], source, key + ".address", "host:port");
  if (peer.name.empty()) Fail(source, key + ".name", "must not be empty");
  if (peer.address.empty()) Fail(source, key + ".address", "must not be empty");
  return peer;
}

std::vector<PeerConfig> ParsePeers(const YAML::Node& node, const std::string& source) {
  if (!node.IsSequence()) Fail(source, "peers", "expected a list");
  std::vector<PeerConfig> peers;
  for (std::size_t i = 0; i < node.size(); ++i) {
    peers.push_back(ParsePeer(node[i], source, "peers[" + std::to_string(i) + "]"));
  }
  return peers;
}

void ParseBudget(const YAML::Node& node, const std::string& source, schedule::Budget& out) {
  if (!node.IsMap()) Fail(source, "budget", "expected a mapping");
  RejectUnknownKeys(node, {"max_bulk_time_fraction_per_rail", "max_bytes_per_hour"}, source,
                    "budget.");
  if (node["max_bulk_time_fraction_per_rail"]) {
    out.max_bulk_time_fraction_per_rail = Positive<double>(
        node["max_bulk_time_fraction_per_rail"], source, "budget.max_bulk_time_fraction_per_rail");
    if (out.max_bulk_time_fraction_per_rail > 0.5) {
      Fail(source, "budget.max_bulk_time_fraction_per_rail",
           "at most 0.5: probes must leave the rails to production traffic");
    }
  }
  if (node["max_bytes_per_hour"]) {
    out.max_bytes_per_hour =
        Positive<std::uint64_t>(node["max_bytes_per_hour"], source, "budget.max_bytes_per_hour");
  }
}

base::BulkConcurrency ParseBulkConcurrency(const YAML::Node& node, const std::string& source) {
  const auto value = Scalar<std::string>(node, source, "bulk_concurrency", "host or rail");
  if (value == "host") return base::BulkConcurrency::kPerHost;
  if (value == "rail") return base::BulkConcurrency::kPerRail;
  Fail(source, "bulk_concurrency", "expected host or rail, got '" + value + "'");
}

void CheckReferences(const AgentConfig& config, const std::string& source) {
  std::set<std::string> peers;
  for (std::size_t i = 0; i < config.probing.peers.size(); ++i) {
    if (!peers.insert(config.probing.peers[i].name).second) {
      Fail(source, "peers[" + std::to_string(i) + "].name",
           "duplicate peer name '" + config.probing.peers[i].name + "'");
    }
  }
  std::set<std::string> rails;
  for (const auto& rail : config.probing.rails) rails.insert(rail.name);
  for (std::size_t i = 0; i < config.probing.probes.size(); ++i) {
    const auto& probe = config.probing.probes[i];
    const std::string key = "probes[" + std::to_string(i) + "]";
    // With a fleet, an entry naming no peers follows the plan.
    if (config.probing.peers.empty() && !(config.probing.fleet && probe.peers.empty())) {
      Fail(source, key, "needs at least one entry under peers (or a fleet section)");
    }
    for (const auto& peer : probe.peers) {
      if (!peers.contains(peer)) Fail(source, key + ".peers", "unknown peer '" + peer + "'");
    }
    // Discovered rails are only known at run time; configured ones can be checked now.
    if (!config.probing.rails.empty() && !config.probing.DiscoverUnlisted()) {
      for (const auto& rail : probe.rails) {
        if (!rails.contains(rail)) Fail(source, key + ".rails", "unknown rail '" + rail + "'");
      }
    }
  }
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
  RejectUnknownKeys(root,
                    {"rails", "discover_rails", "responder", "peers", "fleet", "probes", "budget",
                     "bulk_concurrency", "health", "figures", "ucx_device_quirk_workaround"},
                    source, "");

  if (const auto discover = root["discover_rails"]) {
    config.probing.discover_rails =
        Scalar<bool>(discover, source, "discover_rails", "true or false");
  }
  if (const auto workaround = root["ucx_device_quirk_workaround"]) {
    config.probing.ucx_device_quirk_workaround =
        Scalar<bool>(workaround, source, "ucx_device_quirk_workaround", "true or false");
  }
  if (const auto rails = root["rails"]) config.probing.rails = ParseRails(rails, source);
  if (const auto responder = root["responder"])
    ParseResponder(responder, source, config.probing.responder);
  if (const auto peers = root["peers"]) config.probing.peers = ParsePeers(peers, source);
  if (const auto fleet = root["fleet"]) config.probing.fleet = detail::ParseFleet(fleet, source);
  if (const auto probes = root["probes"])
    config.probing.probes = detail::ParseProbes(probes, source);
  if (const auto budget = root["budget"]) ParseBudget(budget, source, config.probing.budget);
  if (const auto bulk = root["bulk_concurrency"]) {
    config.probing.bulk_concurrency = ParseBulkConcurrency(bulk, source);
  }
  config.probing.responder.limits.bulk_concurrency = config.probing.bulk_concurrency;
  if (const auto health = root["health"]) detail::ParseHealth(health, source, config.health);
  if (const auto figures = root["figures"])
    detail::ParseFigures(figures, source, config.probing.figures);
  CheckReferences(config, source);
  return config;
}

AgentConfig LoadConfigFile(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw ConfigError(
        path + ": cannot be read: " +
        (std::filesystem::exists(path, error) ? "not a regular file" : "no such file"));
  }
  std::ifstream file(path);
  if (!file) throw ConfigError(path + ": cannot be read");
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw ConfigError(path + ": read error");
  return ParseConfig(text.str(), path);
}

}  // namespace rail::agent
