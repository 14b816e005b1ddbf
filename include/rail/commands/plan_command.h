// `rail_exporter plan`: the probes the fleet plan gives one host, printed without running any.
// The same function of the peer list, seed and epoch every agent computes (rail/fleet/plan.h),
// so it answers "whom does this host probe, and who probes it" for any host of a peers file,
// from any machine.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "rail/agent/config.h"
#include "rail/fleet/plan.h"

namespace rail::commands {

struct PlanCommandOptions {
  std::string peers_file;              // file_sd JSON or YAML (fleet::ParseFileSd)
  std::optional<std::string> self;     // the host's target; else the configuration's fleet.self
  std::vector<std::string> rails;      // empty: this host's rails, as the agent finds them in sysfs
  std::optional<std::uint64_t> epoch;  // else the epoch now (the config's fleet.epoch)
  std::optional<unsigned> peers_per_rail;  // else fleet.peers_per_rail, else the default
  std::optional<std::uint64_t> seed;       // else fleet.seed, else 0
  std::vector<std::string> kinds;  // empty: the config's probes[] without peers, else the default
  std::string sysfs_root = "/sys";
  std::optional<std::string> config_file;
  std::string output = "text";  // text | json
};

// The kinds a plan runs without a configuration that names any.
inline constexpr const char* kDefaultPlanKinds[] = {"ucx_rtt", "ucx_throughput"};

// One probe the plan asks for.
struct PlanCommandProbe {
  std::string peer;  // the peer's target
  std::string rail;  // a rail, or for a multi-rail kind its rails joined with "+"
  std::string kind;
  auto operator<=>(const PlanCommandProbe&) const = default;
};

// The probes the agent schedules for the planned `pairs` (PlanFleetProbes: each probes[] entry
// without peers; a single-rail kind over every planned pair of its rails, a multi-rail kind once
// per planned peer of its first rail, over all its rails), one per peer, rail and kind, sorted.
// `rails` are the host's, in its order; `config` must have a fleet section. Throws ConfigError
// when an entry names a rail that is not among `rails`.
std::vector<PlanCommandProbe> ProbesOfPlan(const agent::AgentConfig& config,
                                           const std::vector<std::string>& rails,
                                           const std::vector<fleet::PlannedPair>& pairs);

// {"self": ..., "epoch": ..., "probes": [{"peer", "rail", "kind"}, ...]}
std::string FormatPlanJson(const std::string& self, std::uint64_t epoch,
                           const std::vector<PlanCommandProbe>& probes);
// One line per probe: "<peer> <rail> <kind>".
std::string FormatPlanText(const std::vector<PlanCommandProbe>& probes);

// The exit code: 0 with the plan on `out`; 2 with one line on `err` when it cannot be computed (a
// peers file that cannot be read or parsed, self not among its targets, a rail self's target does
// not list, an unknown kind, a broken configuration).
int RunPlanCommand(const PlanCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace rail::commands
