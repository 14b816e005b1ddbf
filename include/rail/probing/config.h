// The probing service's configuration: the responder, the peers, the fleet section, the probes
// and their budget, as the agent's YAML file (--config.file, parsed in the agent layer) gives them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rail/base/bulk_concurrency.h"
#include "rail/base/errors.h"
#include "rail/fleet/discovery.h"
#include "rail/fleet/plan.h"
#include "rail/gpu/memory.h"
#include "rail/inventory/rails.h"
#include "rail/peer/limits.h"
#include "rail/probe/figures.h"
#include "rail/schedule/scheduler.h"

namespace rail::probing {

// The responder that answers other agents' probes (responder.*).
struct ResponderConfig {
  // responder.listen_address. The responder runs only when the configuration has a responder
  // section (then ":9841" unless given): without a secret it could only refuse peers anyway.
  std::string listen_address;
  std::optional<std::string> secret_file;  // responder.secret_file (also used to probe peers)
  bool insecure = false;                   // responder.insecure: accept peers without a secret
  // responder.allowed_networks (CIDR, IPv4 or IPv6), checked at load; empty: every network.
  std::vector<std::string> allowed_networks;
  peer::Limits limits;  // responder.limits.*
  // responder.name: how this agent names itself in its welcome (peers export it beside the
  // target, and merge two targets that answer with one name); empty: the host name.
  std::string name;

  bool operator==(const ResponderConfig&) const = default;
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
  std::chrono::milliseconds timeout{0};            // probes[].timeout; 0: DefaultTimeout
  std::string transports;                          // probes[].ucx_transports: UCX_TLS override
  std::optional<std::uint64_t> max_bytes;          // probes[].max_bytes: bytes one run may move
  // probes[].memory: host, cuda or cuda_host buffers on both sides (ucx_throughput,
  // multirail_capacity, ucx_multirail_throughput only).
  gpu::MemoryType memory = gpu::MemoryType::kHost;
};

// The timeout of a run given none: its duration and 10 s to connect, wire up and drain.
inline std::chrono::milliseconds DefaultTimeout(std::chrono::milliseconds duration) {
  return duration + std::chrono::seconds(10);
}

// The fleet section: where the peers are found and how the plan picks this host's peers. Present,
// it makes every probes[] entry without `peers` follow the plan.
struct FleetConfig {
  std::optional<std::string> self;  // fleet.self; default: found among the targets (FindSelf)
  unsigned peers_per_rail = fleet::kDefaultPeersPerRail;   // fleet.peers_per_rail
  std::uint64_t seed = 0;                                  // fleet.seed
  std::chrono::seconds epoch{fleet::kDefaultEpochLength};  // fleet.epoch
  // fleet.max_probe_series: the per-peer probe series this agent may export; the configuration
  // is refused when its plan could exceed it.
  std::size_t max_probe_series = 2000;
  std::vector<fleet::Target> static_targets;        // fleet.discovery.static
  std::vector<fleet::FileSdConfig> file_sd;         // fleet.discovery.file_sd
  std::vector<fleet::DnsConfig> dns;                // fleet.discovery.dns
  std::vector<fleet::KubernetesConfig> kubernetes;  // fleet.discovery.kubernetes
};

// Everything the probing service runs from.
struct ProbingConfig {
  std::vector<inventory::RailConfig> rails;
  ResponderConfig responder;
  std::vector<PeerConfig> peers;
  std::optional<FleetConfig> fleet;
  std::vector<ProbeConfig> probes;
  schedule::Budget budget;
  // figures: what a run's figures must obey to be published (probe/figures.h). Restart-only: the
  // checks judge by it too.
  probe::FigureLimits figures;
  // bulk_concurrency: host (one bulk transfer per host at a time) or rail (one per rail), for
  // this agent's own probes and for the ones its responder serves alike.
  base::BulkConcurrency bulk_concurrency = base::kDefaultBulkConcurrency;
  // discover_rails: also publish active ports that no rails[] entry names. Defaults to true
  // when no rail is configured and false otherwise.
  std::optional<bool> discover_rails;
  // ucx_device_quirk_workaround: start the probe worker with the settings that avoid a known
  // fault of our UCX on a rail's device (probe/ucx_quirks.h), when a rail has one. The worker's
  // environment only: the ucx_device_quirk check keeps failing, since every other UCX
  // application on the host still needs them. Read at start only (a reload keeps the worker).
  bool ucx_device_quirk_workaround = false;

  bool DiscoverUnlisted() const { return inventory::DiscoverUnlisted(rails, discover_rails); }
};

// Whether the configuration runs a responder; UCX probes (which need the probe worker); anything
// that probes or answers probes at all.
bool Responds(const ProbingConfig& config);
bool HasUcxProbes(const ProbingConfig& config);
bool Probes(const ProbingConfig& config);

// A configuration the probes cannot be planned from (a probes[] entry naming a rail this host
// lacks, ...); the message names the offending key.
class ConfigError : public base::InputError {
 public:
  using base::InputError::InputError;
};

}  // namespace rail::probing
