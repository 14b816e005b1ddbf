// The agent's YAML configuration (--config.file). Validated when loaded: every error names the
// offending key, so a typo never silently turns into a default.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rail {

// How a rail is expected to carry probe traffic: RDMA transports on RoCE/IB ports, plain TCP on
// lab veths. Used later to tell a silent fallback to TCP from an expected TCP rail.
enum class TransportClass { kRdma, kTcp };

struct RailConfig {
  std::string name;                      // rails[].name, the `rail` label
  std::optional<std::string> device;     // rails[].device, RDMA device (class/infiniband/<d>)
  std::optional<unsigned> port;          // rails[].port, default 1
  std::optional<std::string> netdev;     // rails[].netdev, overrides the discovered netdev
  std::optional<std::string> ipv4;       // rails[].ipv4, overrides the address taken from GIDs
  std::optional<double> expected_rate_gbps;     // rails[].expected_rate_gbps
  std::optional<TransportClass> transport;      // rails[].transport: rdma | tcp
};

struct AgentConfig {
  std::vector<RailConfig> rails;
  // discover_rails: also publish active ports that no rails[] entry names. Defaults to true
  // when no rail is configured and false otherwise.
  std::optional<bool> discover_rails;

  bool DiscoverUnlisted() const { return discover_rails.value_or(rails.empty()); }
};

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses YAML text; `source` names the file in error messages. Throws ConfigError.
AgentConfig ParseConfig(std::string_view yaml_text, const std::string& source);
// Reads and parses a file. Throws ConfigError, also when the file cannot be read.
AgentConfig LoadConfigFile(const std::string& path);

}  // namespace rail
