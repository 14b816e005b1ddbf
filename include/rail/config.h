// The agent's YAML configuration (--config.file). Validated when loaded: every error names the
// offending key, so a typo never silently turns into a default.
#pragma once

#include <chrono>
#include <cstdint>
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
  std::string name;                          // rails[].name, the `rail` label
  std::optional<std::string> device;         // rails[].device, RDMA device (class/infiniband/<d>)
  std::optional<unsigned> port;              // rails[].port, default 1
  std::optional<std::string> netdev;         // rails[].netdev, overrides the discovered netdev
  std::optional<std::string> ipv4;           // rails[].ipv4, overrides the address taken from GIDs
  std::optional<double> expected_rate_gbps;  // rails[].expected_rate_gbps
  std::optional<TransportClass> transport;   // rails[].transport: rdma | tcp
};

// The responder that answers other agents' probes (responder.*).
struct ResponderConfig {
  // responder.listen_address. The responder runs only when the configuration has a responder
  // section (then ":9841" unless given): without a secret it could only refuse peers anyway.
  std::string listen_address;
  std::optional<std::string> secret_file;    // responder.secret_file (also used to probe peers)
  bool insecure = false;                     // responder.insecure: accept peers without a secret
  std::size_t max_frame_bytes = 64 * 1024;   // responder.limits.max_frame_bytes
  std::size_t max_concurrent_sessions = 16;  // responder.limits.max_concurrent_sessions
  std::size_t max_connections_per_ip = 8;    // responder.limits.max_connections_per_ip
  // responder.allowed_networks (CIDR, IPv4 or IPv6), checked at load; empty: every network.
  std::vector<std::string> allowed_networks;
  std::uint64_t max_bytes_per_probe = std::uint64_t{64} << 30;  // .limits.max_bytes_per_probe
  double max_seconds_per_probe = 30;        // responder.limits.max_seconds_per_probe
  double probes_per_minute_per_peer = 60;   // responder.limits.probes_per_minute_per_peer
  std::uint32_t probe_burst_per_peer = 10;  // responder.limits.probe_burst_per_peer
};

struct PeerConfig {
  std::string name;     // peers[].name, the `peer` label
  std::string address;  // peers[].address, host:port of the peer's responder
};

// One probes[] entry: a kind run against some peers over some rails. Single-rail kinds become
// one scheduled job per rail.
struct ProbeConfig {
  std::string kind;                                // probes[].kind
  std::vector<std::string> peers;                  // probes[].peers; empty: every peer
  std::vector<std::string> rails;                  // probes[].rails; empty: every rail
  std::string operation = "put";                   // probes[].operation: put, get, am (UCX kinds)
  std::vector<std::uint64_t> message_sizes_bytes;  // probes[].message_sizes; empty: kind default
  unsigned window = 16;                            // probes[].window: outstanding UCX operations
  unsigned streams = 1;                            // probes[].streams: parallel TCP streams
  std::chrono::milliseconds duration{2000};        // probes[].duration ("2s", "500ms")
  std::chrono::milliseconds interval{300000};      // probes[].interval ("5m")
  double jitter = 0.1;                             // probes[].jitter, fraction of the interval
  std::chrono::milliseconds timeout{0};            // probes[].timeout; 0: duration + 10 s
  std::string transports;                          // probes[].ucx_transports: UCX_TLS override
  std::optional<std::uint64_t> max_bytes;          // probes[].max_bytes: bytes one run may move
};

struct BudgetConfig {
  double max_bulk_time_fraction_per_rail = 0.05;  // budget.max_bulk_time_fraction_per_rail
  std::uint64_t max_bytes_per_hour = std::uint64_t{1} << 40;  // budget.max_bytes_per_hour
};

// Thresholds of the health checks (health.*); see rail/health/checks.h.
struct HealthConfig {
  // health.probe_throughput_min_line_rate_fraction: a rail's ucx_throughput below this fraction
  // of its line rate fails probe_throughput.
  double probe_throughput_min_line_rate_fraction = 0.5;
  // health.probe_throughput_min_sibling_fraction: a rail's throughput below this fraction of the
  // median of its sibling rails (same peer, kind and size) fails probe_throughput.
  double probe_throughput_min_sibling_fraction = 0.5;
  // health.multirail_max_rail_share: one rail carrying more than this share of a multi-rail
  // probe's bytes fails multirail_striping.
  double multirail_max_rail_share = 0.8;
};

struct AgentConfig {
  std::vector<RailConfig> rails;
  ResponderConfig responder;
  std::vector<PeerConfig> peers;
  std::vector<ProbeConfig> probes;
  BudgetConfig budget;
  HealthConfig health;
  // discover_rails: also publish active ports that no rails[] entry names. Defaults to true
  // when no rail is configured and false otherwise.
  std::optional<bool> discover_rails;

  bool DiscoverUnlisted() const { return discover_rails.value_or(rails.empty()); }
};

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "250ms", "2s", "5m", "1h" (a bare number is seconds). nullopt when malformed, negative, not
// finite or longer than kMaxDuration.
inline constexpr std::chrono::hours kMaxDuration{10 * 365 * 24};
std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text);

// Parses YAML text; `source` names the file in error messages. Throws ConfigError.
AgentConfig ParseConfig(std::string_view yaml_text, const std::string& source);
// Reads and parses a file. Throws ConfigError, also when the file cannot be read.
AgentConfig LoadConfigFile(const std::string& path);

}  // namespace rail
