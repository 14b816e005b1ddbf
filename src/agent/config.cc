#include "rail/agent/config.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "rail/peer/allow_list.h"
#include "rail/probe/result.h"

namespace rail::agent {
namespace {

[[noreturn]] void Fail(const std::string& source, const std::string& key, const std::string& why) {
  throw ConfigError(source + ": " + key + ": " + why);
}

void RejectUnknownKeys(const YAML::Node& map, const std::set<std::string>& known,
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

inventory::RailConfig ParseRail(const YAML::Node& node, const std::string& source, const std::string& key) {
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
    const auto transport =
        Scalar<std::string>(node["transport"], source, key + ".transport", "rdma or tcp");
    if (transport == "rdma") {
      rail.transport = inventory::TransportClass::kRdma;
    } else if (transport == "tcp") {
      rail.transport = inventory::TransportClass::kTcp;
    } else {
      Fail(source, key + ".transport", "expected rdma or tcp, got '" + transport + "'");
    }
  }
  if (!rail.device && !rail.netdev) {
    Fail(source, key, "needs a device (RDMA port) or a netdev");
  }
  return rail;
}

template <typename T>
T Positive(const YAML::Node& node, const std::string& source, const std::string& key) {
  const auto value = Scalar<T>(node, source, key, "a positive number");
  if (!(value > 0)) Fail(source, key, "must be positive");
  return value;
}

std::chrono::milliseconds DurationValue(const YAML::Node& node, const std::string& source,
                                        const std::string& key) {
  const auto text = Scalar<std::string>(node, source, key, "a duration such as 2s or 5m");
  const auto duration = ParseDuration(text);
  if (!duration || duration->count() <= 0) {
    Fail(source, key,
         "expected a positive duration such as 500ms, 2s, 5m or 1h, got '" + text + "'");
  }
  return *duration;
}

std::vector<std::string> StringList(const YAML::Node& node, const std::string& source,
                                    const std::string& key) {
  if (!node.IsSequence()) Fail(source, key, "expected a list");
  std::vector<std::string> values;
  for (std::size_t i = 0; i < node.size(); ++i) {
    values.push_back(
        Scalar<std::string>(node[i], source, key + "[" + std::to_string(i) + "]", "a string"));
  }
  return values;
}

void ParseResponder(const YAML::Node& node, const std::string& source, ResponderConfig& out) {
  if (!node.IsMap()) Fail(source, "responder", "expected a mapping");
  out.listen_address = ":9841";
  RejectUnknownKeys(node,
                    {"listen_address", "secret_file", "insecure", "limits", "allowed_networks"},
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
    out.allowed_networks =
        StringList(node["allowed_networks"], source, "responder.allowed_networks");
    for (std::size_t i = 0; i < out.allowed_networks.size(); ++i) {
      std::string error;
      if (!peer::ParseNetwork(out.allowed_networks[i], &error)) {
        Fail(source, "responder.allowed_networks[" + std::to_string(i) + "]", error);
      }
    }
    if (out.allowed_networks.empty()) {
      // An empty list would read as "nobody" but mean "everybody": refuse the ambiguity.
      Fail(source, "responder.allowed_networks",
           "empty; leave the key out to accept every network");
    }
  }
  if (const auto limits = node["limits"]) {
    const std::string prefix = "responder.limits.";
    if (!limits.IsMap()) Fail(source, "responder.limits", "expected a mapping");
    RejectUnknownKeys(limits,
                      {"max_frame_bytes", "max_concurrent_sessions", "max_connections_per_ip",
                       "max_bytes_per_probe", "max_seconds_per_probe", "probes_per_minute_per_peer",
                       "probe_burst_per_peer"},
                      source, prefix);
    if (limits["max_frame_bytes"]) {
      out.limits.max_frame_bytes =
          Positive<std::size_t>(limits["max_frame_bytes"], source, prefix + "max_frame_bytes");
    }
    if (limits["max_concurrent_sessions"]) {
      out.limits.max_concurrent_sessions = Positive<std::size_t>(limits["max_concurrent_sessions"], source,
                                                          prefix + "max_concurrent_sessions");
    }
    if (limits["max_connections_per_ip"]) {
      out.limits.max_connections_per_ip = Positive<std::size_t>(limits["max_connections_per_ip"], source,
                                                         prefix + "max_connections_per_ip");
    }
    if (limits["max_bytes_per_probe"]) {
      out.limits.max_bytes_per_probe = Positive<std::uint64_t>(limits["max_bytes_per_probe"], source,
                                                        prefix + "max_bytes_per_probe");
    }
    if (limits["max_seconds_per_probe"]) {
      out.limits.max_seconds_per_probe = Positive<double>(limits["max_seconds_per_probe"], source,
                                                   prefix + "max_seconds_per_probe");
    }
    if (limits["probes_per_minute_per_peer"]) {
      out.limits.probes_per_minute_per_peer = Positive<double>(
          limits["probes_per_minute_per_peer"], source, prefix + "probes_per_minute_per_peer");
    }
    if (limits["probe_burst_per_peer"]) {
      out.limits.probe_burst_per_peer = Positive<std::uint32_t>(limits["probe_burst_per_peer"], source,
                                                         prefix + "probe_burst_per_peer");
    }
  }
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

ProbeConfig ParseProbe(const YAML::Node& node, const std::string& source, const std::string& key) {
  if (!node.IsMap()) Fail(source, key, "expected a mapping");
  RejectUnknownKeys(node,
                    {"kind", "peers", "rails", "operation", "message_sizes", "window", "streams",
                     "duration", "interval", "jitter", "timeout", "ucx_transports", "max_bytes"},
                    source, key + ".");
  ProbeConfig probe;
  if (!node["kind"]) Fail(source, key + ".kind", "missing");
  probe.kind = Scalar<std::string>(node["kind"], source, key + ".kind", "a probe kind");
  if (!probe::ParseProbeKind(probe.kind)) {
    Fail(source, key + ".kind",
         "unknown probe kind '" + probe.kind +
             "' (ucx_throughput, ucx_rtt, multirail_capacity, ucx_multirail_throughput, "
             "tcp_throughput, tcp_rtt)");
  }
  if (node["peers"]) probe.peers = StringList(node["peers"], source, key + ".peers");
  if (node["rails"]) probe.rails = StringList(node["rails"], source, key + ".rails");
  if (node["operation"]) {
    probe.operation =
        Scalar<std::string>(node["operation"], source, key + ".operation", "put, get or am");
    if (!probe::ParseUcxOperation(probe.operation)) {
      Fail(source, key + ".operation", "expected put, get or am, got '" + probe.operation + "'");
    }
  }
  if (const auto sizes = node["message_sizes"]) {
    if (!sizes.IsSequence() || sizes.size() == 0) {
      Fail(source, key + ".message_sizes", "expected a non-empty list of byte counts");
    }
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      probe.message_sizes_bytes.push_back(Positive<std::uint64_t>(
          sizes[i], source, key + ".message_sizes[" + std::to_string(i) + "]"));
    }
  }
  if (node["window"]) probe.window = Positive<unsigned>(node["window"], source, key + ".window");
  if (node["streams"]) {
    probe.streams = Positive<unsigned>(node["streams"], source, key + ".streams");
    if (probe.streams > 64) Fail(source, key + ".streams", "at most 64");
  }
  if (node["duration"]) probe.duration = DurationValue(node["duration"], source, key + ".duration");
  if (node["interval"]) probe.interval = DurationValue(node["interval"], source, key + ".interval");
  if (node["timeout"]) probe.timeout = DurationValue(node["timeout"], source, key + ".timeout");
  if (node["jitter"]) {
    probe.jitter = Scalar<double>(node["jitter"], source, key + ".jitter", "a fraction");
    if (probe.jitter < 0 || probe.jitter >= 1) Fail(source, key + ".jitter", "must be in [0, 1)");
  }
  if (node["ucx_transports"]) {
    probe.transports = Scalar<std::string>(node["ucx_transports"], source, key + ".ucx_transports",
                                           "a UCX_TLS value");
  }
  if (node["max_bytes"]) {
    probe.max_bytes = Positive<std::uint64_t>(node["max_bytes"], source, key + ".max_bytes");
  }
  if (probe.timeout.count() == 0) probe.timeout = probe.duration + std::chrono::seconds(10);
  if (probe.timeout <= probe.duration) {
    Fail(source, key + ".timeout", "must be longer than the duration");
  }
  if (probe.interval <= probe.timeout) {
    Fail(source, key + ".interval", "must be longer than the timeout");
  }
  return probe;
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

// A fraction in (0, 1].
double Fraction(const YAML::Node& node, const std::string& source, const std::string& key) {
  const auto value = Scalar<double>(node, source, key, "a number between 0 and 1");
  if (!(value > 0 && value <= 1)) {
    Fail(source, key, "must be greater than 0 and at most 1, got " + node.Scalar());
  }
  return value;
}

void ParseHealth(const YAML::Node& node, const std::string& source, health::Thresholds& out) {
  if (!node.IsMap()) Fail(source, "health", "expected a mapping");
  RejectUnknownKeys(node,
                    {"probe_throughput_min_line_rate_fraction",
                     "probe_throughput_min_sibling_fraction", "multirail_max_rail_share"},
                    source, "health.");
  if (node["probe_throughput_min_line_rate_fraction"]) {
    out.probe_throughput_min_line_rate_fraction =
        Fraction(node["probe_throughput_min_line_rate_fraction"], source,
                 "health.probe_throughput_min_line_rate_fraction");
  }
  if (node["probe_throughput_min_sibling_fraction"]) {
    out.probe_throughput_min_sibling_fraction =
        Fraction(node["probe_throughput_min_sibling_fraction"], source,
                 "health.probe_throughput_min_sibling_fraction");
  }
  if (node["multirail_max_rail_share"]) {
    out.multirail_max_rail_share =
        Fraction(node["multirail_max_rail_share"], source, "health.multirail_max_rail_share");
    // With a share of 1 no rail could ever carry more: the check would be off without saying so.
    if (out.multirail_max_rail_share >= 1) {
      Fail(source, "health.multirail_max_rail_share", "must be below 1");
    }
  }
}

void CheckReferences(const AgentConfig& config, const std::string& source) {
  std::set<std::string> peers;
  for (std::size_t i = 0; i < config.peers.size(); ++i) {
    if (!peers.insert(config.peers[i].name).second) {
      Fail(source, "peers[" + std::to_string(i) + "].name",
           "duplicate peer name '" + config.peers[i].name + "'");
    }
  }
  std::set<std::string> rails;
  for (const auto& rail : config.rails) rails.insert(rail.name);
  for (std::size_t i = 0; i < config.probes.size(); ++i) {
    const auto& probe = config.probes[i];
    const std::string key = "probes[" + std::to_string(i) + "]";
    if (config.peers.empty()) Fail(source, key, "needs at least one entry under peers");
    for (const auto& peer : probe.peers) {
      if (!peers.contains(peer)) Fail(source, key + ".peers", "unknown peer '" + peer + "'");
    }
    // Discovered rails are only known at run time; configured ones can be checked now.
    if (!config.rails.empty() && !config.DiscoverUnlisted()) {
      for (const auto& rail : probe.rails) {
        if (!rails.contains(rail)) Fail(source, key + ".rails", "unknown rail '" + rail + "'");
      }
    }
  }
}

}  // namespace

std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  double number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  double milliseconds_per_unit = 0;
  if (unit == "ms") {
    milliseconds_per_unit = 1;
  } else if (unit == "s" || unit.empty()) {
    milliseconds_per_unit = 1e3;
  } else if (unit == "m") {
    milliseconds_per_unit = 60e3;
  } else if (unit == "h") {
    milliseconds_per_unit = 3600e3;
  } else {
    return std::nullopt;
  }
  // from_chars also reads "inf", "nan" and 1e300, which no integer holds; converting those is
  // undefined. The bound also keeps "now + interval" and "duration + 10 s" in range.
  const double milliseconds = number * milliseconds_per_unit;
  const auto max = std::chrono::duration_cast<std::chrono::milliseconds>(kMaxDuration).count();
  if (!(milliseconds >= 0 && milliseconds <= static_cast<double>(max))) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(milliseconds));
}

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
                    {"rails", "discover_rails", "responder", "peers", "probes", "budget", "health"},
                    source, "");

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
  if (const auto responder = root["responder"]) ParseResponder(responder, source, config.responder);
  if (const auto peers = root["peers"]) {
    if (!peers.IsSequence()) Fail(source, "peers", "expected a list");
    for (std::size_t i = 0; i < peers.size(); ++i) {
      config.peers.push_back(ParsePeer(peers[i], source, "peers[" + std::to_string(i) + "]"));
    }
  }
  if (const auto probes = root["probes"]) {
    if (!probes.IsSequence()) Fail(source, "probes", "expected a list");
    for (std::size_t i = 0; i < probes.size(); ++i) {
      config.probes.push_back(ParseProbe(probes[i], source, "probes[" + std::to_string(i) + "]"));
    }
  }
  if (const auto budget = root["budget"]) ParseBudget(budget, source, config.budget);
  if (const auto health = root["health"]) ParseHealth(health, source, config.health);
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
