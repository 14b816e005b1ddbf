// The fleet section of the agent's configuration: where peers are discovered and how the plan
// picks this host's peers among them.
#include <string>
#include <vector>

#include "agent/config_yaml.h"
#include "rail/agent/config.h"
#include "rail/peer/connection.h"

namespace rail::agent::detail {
namespace {

std::string Key(const std::string& list, std::size_t index) {
  return list + "[" + std::to_string(index) + "]";
}

// A source polled more often than this would load the API or DNS server for nothing: peers come
// and go over minutes.
constexpr std::chrono::seconds kShortestRefresh{1};

std::chrono::milliseconds RefreshInterval(const YAML::Node& node, const std::string& source,
                                          const std::string& key) {
  const auto interval = DurationValue(node, source, key);
  if (interval < kShortestRefresh) Fail(source, key, "must be at least 1s");
  return interval;
}

// A "host:port" a peer's responder listens on; the port is required, as a target names one
// responder.
std::string TargetAddress(const YAML::Node& node, const std::string& source,
                          const std::string& key) {
  const auto text = Scalar<std::string>(node, source, key, "host:port");
  std::string error;
  const auto parsed = peer::ParseHostPort(text, 0, &error);
  if (!parsed) Fail(source, key, error);
  if (parsed->port == 0) Fail(source, key, "needs a port: host:port");
  return text;
}

std::uint16_t Port(const YAML::Node& node, const std::string& source, const std::string& key) {
  const auto port = Scalar<unsigned>(node, source, key, "a port number");
  if (port == 0 || port > 65535) Fail(source, key, "must be a port number (1-65535)");
  return static_cast<std::uint16_t>(port);
}

std::vector<fleet::Target> StaticTargets(const YAML::Node& node, const std::string& source) {
  const std::string key = "fleet.discovery.static";
  if (!node.IsSequence()) Fail(source, key, "expected a list of host:port");
  std::vector<fleet::Target> targets;
  for (std::size_t i = 0; i < node.size(); ++i) {
    targets.push_back({TargetAddress(node[i], source, Key(key, i)), {}});
  }
  return targets;
}

fleet::FileSdConfig FileSd(const YAML::Node& node, const std::string& source,
                           const std::string& key) {
  if (!node.IsMap()) Fail(source, key, "expected a mapping");
  RejectUnknownKeys(node, {"files", "refresh_interval"}, source, key + ".");
  fleet::FileSdConfig config;
  if (!node["files"]) Fail(source, key + ".files", "missing");
  config.files = StringList(node["files"], source, key + ".files");
  if (config.files.empty()) Fail(source, key + ".files", "needs at least one file");
  if (const auto interval = node["refresh_interval"]) {
    config.refresh_interval = RefreshInterval(interval, source, key + ".refresh_interval");
  }
  return config;
}

fleet::DnsRecordType RecordType(const YAML::Node& node, const std::string& source,
                                const std::string& key) {
  const auto text = Scalar<std::string>(node, source, key, "A, AAAA or SRV");
  if (text == "A") return fleet::DnsRecordType::kA;
  if (text == "AAAA") return fleet::DnsRecordType::kAaaa;
  if (text == "SRV") return fleet::DnsRecordType::kSrv;
  Fail(source, key, "expected A, AAAA or SRV, got '" + text + "'");
}

fleet::DnsConfig Dns(const YAML::Node& node, const std::string& source, const std::string& key) {
  if (!node.IsMap()) Fail(source, key, "expected a mapping");
  RejectUnknownKeys(node, {"names", "type", "port", "server", "refresh_interval", "timeout"},
                    source, key + ".");
  fleet::DnsConfig config;
  if (!node["names"]) Fail(source, key + ".names", "missing");
  config.names = StringList(node["names"], source, key + ".names");
  if (config.names.empty()) Fail(source, key + ".names", "needs at least one name");
  if (const auto type = node["type"]) config.type = RecordType(type, source, key + ".type");
  if (const auto port = node["port"]) config.port = Port(port, source, key + ".port");
  if (const auto server = node["server"]) {
    config.server = Scalar<std::string>(server, source, key + ".server", "ip or ip:port");
    std::string error;
    if (!peer::ParseHostPort(config.server, 53, &error)) Fail(source, key + ".server", error);
  }
  if (const auto interval = node["refresh_interval"]) {
    config.refresh_interval = RefreshInterval(interval, source, key + ".refresh_interval");
  }
  if (const auto timeout = node["timeout"]) {
    config.timeout = DurationValue(timeout, source, key + ".timeout");
  }
  return config;
}

fleet::KubernetesConfig Kubernetes(const YAML::Node& node, const std::string& source,
                                   const std::string& key) {
  if (!node.IsMap()) Fail(source, key, "expected a mapping");
  RejectUnknownKeys(node,
                    {"service", "namespace", "port_name", "api_server", "token_file", "ca_file",
                     "refresh_interval", "timeout"},
                    source, key + ".");
  fleet::KubernetesConfig config;
  if (!node["service"]) Fail(source, key + ".service", "missing");
  const auto text = [&](const char* field, std::string& out) {
    if (const auto value = node[field]) {
      out = Scalar<std::string>(value, source, key + "." + field, "a string");
    }
  };
  text("service", config.service);
  text("namespace", config.namespace_);
  text("port_name", config.port_name);
  text("api_server", config.api_server);
  text("token_file", config.token_file);
  text("ca_file", config.ca_file);
  if (config.service.empty()) Fail(source, key + ".service", "must not be empty");
  if (const auto interval = node["refresh_interval"]) {
    config.refresh_interval = RefreshInterval(interval, source, key + ".refresh_interval");
  }
  if (const auto timeout = node["timeout"]) {
    config.timeout = DurationValue(timeout, source, key + ".timeout");
  }
  return config;
}

template <typename Config, typename Parse>
std::vector<Config> Entries(const YAML::Node& node, const std::string& source,
                            const std::string& key, Parse parse) {
  if (!node.IsSequence()) Fail(source, key, "expected a list");
  std::vector<Config> entries;
  for (std::size_t i = 0; i < node.size(); ++i)
    entries.push_back(parse(node[i], source, Key(key, i)));
  return entries;
}

void ParseDiscovery(const YAML::Node& node, const std::string& source, FleetConfig& out) {
  const std::string key = "fleet.discovery";
  if (!node.IsMap()) Fail(source, key, "expected a mapping");
  RejectUnknownKeys(node, {"static", "file_sd", "dns", "kubernetes"}, source, key + ".");
  if (const auto list = node["static"]) out.static_targets = StaticTargets(list, source);
  if (const auto list = node["file_sd"]) {
    out.file_sd = Entries<fleet::FileSdConfig>(list, source, key + ".file_sd", FileSd);
  }
  if (const auto list = node["dns"])
    out.dns = Entries<fleet::DnsConfig>(list, source, key + ".dns", Dns);
  if (const auto list = node["kubernetes"]) {
    out.kubernetes =
        Entries<fleet::KubernetesConfig>(list, source, key + ".kubernetes", Kubernetes);
  }
  if (out.static_targets.empty() && out.file_sd.empty() && out.dns.empty() &&
      out.kubernetes.empty()) {
    Fail(source, key, "needs at least one source: static, file_sd, dns or kubernetes");
  }
}

}  // namespace

FleetConfig ParseFleet(const YAML::Node& node, const std::string& source) {
  if (!node.IsMap()) Fail(source, "fleet", "expected a mapping");
  RejectUnknownKeys(node,
                    {"self", "peers_per_rail", "seed", "epoch", "max_probe_series", "discovery"},
                    source, "fleet.");
  FleetConfig fleet;
  if (const auto self = node["self"]) fleet.self = TargetAddress(self, source, "fleet.self");
  if (const auto k = node["peers_per_rail"]) {
    fleet.peers_per_rail = Positive<unsigned>(k, source, "fleet.peers_per_rail");
  }
  if (const auto seed = node["seed"]) {
    fleet.seed = Scalar<std::uint64_t>(seed, source, "fleet.seed", "a non-negative integer");
  }
  if (const auto epoch = node["epoch"]) {
    const auto length = DurationValue(epoch, source, "fleet.epoch");
    if (length < std::chrono::minutes(1)) Fail(source, "fleet.epoch", "must be at least 1m");
    fleet.epoch = std::chrono::duration_cast<std::chrono::seconds>(length);
  }
  if (const auto budget = node["max_probe_series"]) {
    fleet.max_probe_series = Positive<std::size_t>(budget, source, "fleet.max_probe_series");
  }
  if (!node["discovery"]) Fail(source, "fleet.discovery", "missing");
  ParseDiscovery(node["discovery"], source, fleet);
  return fleet;
}

}  // namespace rail::agent::detail
