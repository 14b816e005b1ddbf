// `rail_exporter plan`: reads the peers file, settles self, the rails, the kinds and the plan's
// options (flags over the configuration's fleet section over the defaults), and prints what
// fleet::PlanForHost gives. No probe runs and no peer is contacted.
#include "rail/agent/plan_command.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "rail/agent/config.h"
#include "rail/agent/probe_wiring.h"
#include "rail/fleet/file_sd.h"
#include "rail/fleet/target.h"
#include "rail/probe/result.h"
#include "rail/sysfs/filesystem.h"

namespace rail::agent {
namespace {

// Why the plan cannot be computed: one line, exit status 2.
class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string Join(const std::vector<std::string>& items, const std::string& separator) {
  std::string joined;
  for (const auto& item : items) joined += (joined.empty() ? "" : separator) + item;
  return joined;
}

std::vector<fleet::Target> ReadPeersFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw PlanError(path + ": cannot read: " + std::strerror(errno));
  std::stringstream text;
  text << file.rdbuf();
  // file_sd leaves repeated targets to the merge, as discovery does.
  return fleet::MergeTargets({fleet::ParseFileSd(text.str(), path)});
}

const fleet::Target& FindSelf(const std::vector<fleet::Target>& targets, const std::string& self,
                              const std::string& peers_file) {
  const auto found = std::find_if(targets.begin(), targets.end(),
                                  [&](const fleet::Target& t) { return t.address == self; });
  if (found == targets.end()) {
    throw PlanError("self " + self + " is not among the " + std::to_string(targets.size()) +
                    " targets of " + peers_file);
  }
  return *found;
}

std::vector<std::string> Unique(const std::vector<std::string>& items) {
  std::vector<std::string> unique;
  for (const auto& item : items) {
    if (std::find(unique.begin(), unique.end(), item) == unique.end()) unique.push_back(item);
  }
  return unique;
}

std::string RailsLabel(const fleet::Target& self) {
  return Join(fleet::TargetRails(self).value_or(std::vector<std::string>{}), ",");
}

// The rails named on the command line, each one self's target must be on; else this host's
// rails in sysfs that self's target is on.
std::vector<std::string> PlanRails(const PlanCommandOptions& options, const AgentConfig& config,
                                   const fleet::Target& self) {
  if (!options.rails.empty()) {
    const auto rails = Unique(options.rails);
    for (const auto& rail : rails) {
      if (!fleet::OnRail(self, rail)) {
        throw PlanError("unknown rail " + rail + ": " + self.address + " lists rails " +
                        RailsLabel(self) + " in the peers file");
      }
    }
    return rails;
  }
  const sysfs::RootedFilesystem sys(options.sysfs_root);
  std::vector<std::string> local;
  for (const auto& rail : LocalProbeRails(sys, config)) local.push_back(rail.name);
  if (local.empty()) {
    throw PlanError("no rails found under " + options.sysfs_root + "; name them with --rails");
  }
  std::vector<std::string> rails;
  for (const auto& rail : Unique(local)) {
    if (fleet::OnRail(self, rail)) rails.push_back(rail);
  }
  if (rails.empty()) {
    throw PlanError("none of this host's rails (" + Join(local, ",") + ") is among " +
                    self.address + "'s rails (" + RailsLabel(self) + ") in the peers file");
  }
  return rails;
}

std::vector<PlanKind> Kinds(const PlanCommandOptions& options, const AgentConfig& config) {
  std::vector<PlanKind> kinds;
  if (!options.kinds.empty()) {
    for (const auto& kind : Unique(options.kinds)) kinds.push_back({kind, {}});
  } else {
    // The entries that follow the plan: those that name no peers.
    for (const auto& probe : config.probes) {
      if (probe.peers.empty()) kinds.push_back({probe.kind, probe.rails});
    }
    if (kinds.empty()) {
      for (const char* kind : kDefaultPlanKinds) kinds.push_back({kind, {}});
    }
  }
  for (const auto& kind : kinds) {
    if (!probe::ParseProbeKind(kind.kind)) throw PlanError("unknown probe kind " + kind.kind);
  }
  return kinds;
}

fleet::PlanOptions Options(const PlanCommandOptions& options, const AgentConfig& config) {
  const FleetConfig fleet_config = config.fleet.value_or(FleetConfig{});
  fleet::PlanOptions plan;
  plan.peers_per_rail = options.peers_per_rail.value_or(fleet_config.peers_per_rail);
  plan.seed = options.seed.value_or(fleet_config.seed);
  plan.epoch = options.epoch ? *options.epoch
                             : fleet::EpochAt(std::chrono::system_clock::now(), fleet_config.epoch);
  return plan;
}

std::string SelfOf(const PlanCommandOptions& options, const AgentConfig& config) {
  if (options.self) return *options.self;
  if (config.fleet && config.fleet->self) return *config.fleet->self;
  throw PlanError("--self: name this host's target (or set fleet.self in --config.file)");
}

// The kind's rails among the planned ones, in the host's order.
std::vector<std::string> RailsOfKind(const PlanKind& kind, const std::vector<std::string>& rails) {
  if (kind.rails.empty()) return rails;
  std::vector<std::string> selected;
  for (const auto& rail : rails) {
    if (std::find(kind.rails.begin(), kind.rails.end(), rail) != kind.rails.end()) {
      selected.push_back(rail);
    }
  }
  return selected;
}

}  // namespace

std::vector<PlannedProbe> PlannedProbes(const std::vector<fleet::PlannedPair>& plan,
                                        const std::vector<std::string>& rails,
                                        const std::vector<PlanKind>& kinds) {
  std::vector<PlannedProbe> probes;
  for (const auto& kind : kinds) {
    const auto parsed = probe::ParseProbeKind(kind.kind);
    if (!parsed) throw std::invalid_argument("unknown probe kind " + kind.kind);
    const auto kind_rails = RailsOfKind(kind, rails);
    if (kind_rails.empty()) continue;
    if (probe::IsMultiRail(*parsed)) {
      const std::string joined = Join(kind_rails, "+");
      for (const auto& pair : plan) {
        if (pair.rail == kind_rails.front()) probes.push_back({pair.peer, joined, kind.kind});
      }
      continue;
    }
    for (const auto& pair : plan) {
      if (std::find(kind_rails.begin(), kind_rails.end(), pair.rail) != kind_rails.end()) {
        probes.push_back({pair.peer, pair.rail, kind.kind});
      }
    }
  }
  std::sort(probes.begin(), probes.end());
  // Two probes[] entries of one kind (other sizes, say) probe the same pairs: listed once.
  probes.erase(std::unique(probes.begin(), probes.end()), probes.end());
  return probes;
}

std::string FormatPlanJson(const std::string& self, std::uint64_t epoch,
                           const std::vector<PlannedProbe>& probes) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& probe : probes) {
    list.push_back({{"peer", probe.peer}, {"rail", probe.rail}, {"kind", probe.kind}});
  }
  const nlohmann::ordered_json json = {
      {"self", self}, {"epoch", epoch}, {"probes", std::move(list)}};
  return json.dump(2) + "\n";
}

std::string FormatPlanText(const std::vector<PlannedProbe>& probes) {
  std::string text;
  for (const auto& probe : probes) text += probe.peer + " " + probe.rail + " " + probe.kind + "\n";
  return text;
}

int RunPlanCommand(const PlanCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (options.output != "text" && options.output != "json") {
    err << "rail_exporter plan: --output: expected text or json\n";
    return 2;
  }
  try {
    AgentConfig config;
    if (options.config_file) config = LoadConfigFile(*options.config_file);
    const std::string self = SelfOf(options, config);
    const auto targets = ReadPeersFile(options.peers_file);
    const auto rails = PlanRails(options, config, FindSelf(targets, self, options.peers_file));
    const auto kinds = Kinds(options, config);
    const auto plan_options = Options(options, config);
    const auto plan = fleet::PlanForHost(targets, self, rails, plan_options);
    const auto probes = PlannedProbes(plan, rails, kinds);
    out << (options.output == "json" ? FormatPlanJson(self, plan_options.epoch, probes)
                                     : FormatPlanText(probes));
    return 0;
  } catch (const std::exception& error) {
    err << "rail_exporter plan: " << error.what() << "\n";
    return 2;
  }
}

}  // namespace rail::agent
