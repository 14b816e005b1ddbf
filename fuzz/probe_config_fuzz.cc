// The agent's YAML configuration (rail::agent::ParseConfig, --config.file) and the durations in it
// (rail::agent::ParseDuration).
//
// ParseConfig documents one exception type, rail::agent::ConfigError; anything else escaping (a raw
// yaml-cpp exception, std::out_of_range, ...) is a crash. Invariants: what it accepts satisfies
// the checks config.h and docs/configuration.md promise (names non-empty and unique, ports 1..255,
// probe timeout between duration and interval, budget fraction in (0, 0.5], ...).
#include <cstdint>
#include <set>
#include <string>

#include "fuzz_check.h"
#include "rail/agent/config.h"

namespace {

void CheckAccepted(const rail::agent::AgentConfig& config) {
  std::set<std::string> rail_names;
  for (const rail::inventory::RailConfig& rail : config.probing.rails) {
    FUZZ_CHECK(!rail.name.empty(), "rail names non-empty");
    FUZZ_CHECK(rail_names.insert(rail.name).second, "rail names unique");
    FUZZ_CHECK(rail.device || rail.netdev, "a rail has a device or a netdev");
    FUZZ_CHECK(!rail.port || (*rail.port >= 1 && *rail.port <= 255), "rail ports 1..255");
    FUZZ_CHECK(!rail.expected_rate_gbps || *rail.expected_rate_gbps > 0, "rates positive");
  }
  std::set<std::string> peer_names;
  for (const rail::agent::PeerConfig& peer : config.probing.peers) {
    FUZZ_CHECK(!peer.name.empty() && !peer.address.empty(), "peers named and addressed");
    FUZZ_CHECK(peer_names.insert(peer.name).second, "peer names unique");
  }
  for (const rail::agent::ProbeConfig& probe : config.probing.probes) {
    FUZZ_CHECK(!config.probing.peers.empty(), "probes need peers");
    for (const std::string& peer : probe.peers) {
      FUZZ_CHECK(peer_names.contains(peer), "a probe names known peers only");
    }
    FUZZ_CHECK(probe.duration.count() > 0, "durations positive");
    FUZZ_CHECK(probe.duration < probe.timeout && probe.timeout < probe.interval,
               "duration < timeout < interval");
    FUZZ_CHECK(probe.streams >= 1 && probe.streams <= 64, "streams 1..64");
    FUZZ_CHECK(probe.window >= 1, "window positive");
    FUZZ_CHECK(probe.jitter >= 0 && probe.jitter < 1, "jitter in [0, 1)");
    for (std::uint64_t size : probe.message_sizes_bytes) FUZZ_CHECK(size > 0, "sizes positive");
    FUZZ_CHECK(!probe.max_bytes || *probe.max_bytes > 0, "max_bytes positive");
  }
  const rail::agent::ResponderConfig& responder = config.probing.responder;
  const rail::peer::Limits& limits = responder.limits;
  FUZZ_CHECK(limits.max_frame_bytes > 0 && limits.max_concurrent_sessions > 0 &&
                 limits.max_bytes_per_probe > 0 && limits.max_seconds_per_probe > 0 &&
                 limits.probes_per_minute_per_peer > 0 && limits.probe_burst_per_peer > 0,
             "responder limits positive");
  FUZZ_CHECK(config.probing.budget.max_bulk_time_fraction_per_rail > 0 &&
                 config.probing.budget.max_bulk_time_fraction_per_rail <= 0.5,
             "budget fraction in (0, 0.5]");
  FUZZ_CHECK(config.probing.budget.max_bytes_per_hour > 0, "byte budget positive");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = rail::fuzz::AsText(data, size);
  if (const auto duration = rail::agent::ParseDuration(text)) {
    FUZZ_CHECK(duration->count() >= 0 && *duration <= rail::agent::kMaxDuration,
               "durations are within [0, kMaxDuration]");
  }
  try {
    CheckAccepted(rail::agent::ParseConfig(text, "fuzz.yaml"));
  } catch (const rail::agent::ConfigError& error) {
    FUZZ_CHECK(std::string_view(error.what()).starts_with("fuzz.yaml: "),
               "a configuration error names the file");
  }
  return 0;
}
