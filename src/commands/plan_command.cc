// `rail_exporter plan`: reads the peers file, settles self, the rails, the kinds and the plan's
// options (flags over the configuration's fleet section over the defaults), and prints what
// fleet::PlanForHost gives. No probe runs and no peer is contacted.
#include "rail/commands/plan_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "rail/agent/config.h"
#include "rail/commands/command_setup.h"
#include "rail/fleet/file_sd.h"
#include "rail/fleet/target.h"
#include "rail/probe/result.h"
#include "rail/probe/result_store.h"
#include "rail/probing/plan.h"
#include "rail/probing/wiring.h"
#include "rail/sysfs/filesystem.h"

namespace rail::commands {
namespace {

// Why the plan cannot be computed: one line, exit status 2.
class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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
  return fmt::format("{}",
                     fmt::join(fleet::TargetRails(self).value_or(std::vector<std::string>{}), ","));
}

// The rails named on the command line, each one self's target must be on; else this host's
// rails in sysfs, as the agent plans with them (the plan leaves out those self's target does not
// list; one of them at least must be listed).
std::vector<std::string> PlanRails(const PlanCommandOptions& options,
                                   const agent::AgentConfig& config, const fleet::Target& self) {
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
  for (const auto& rail : probing::LocalProbeRails(sys, config.probing)) local.push_back(rail.name);
  if (local.empty()) {
    throw PlanError("no rails found under " + options.sysfs_root + "; name them with --rails");
  }
  local = Unique(local);
  if (std::none_of(local.begin(), local.end(),
                   [&](const std::string& rail) { return fleet::OnRail(self, rail); })) {
    throw PlanError("none of this host's rails (" + fmt::format("{}", fmt::join(local, ",")) +
                    ") is among " + self.address + "'s rails (" + RailsLabel(self) +
                    ") in the peers file");
  }
  return local;
}

// The configuration the plan's probes come from: its probes[] entries without peers, or entries
// of the --kinds (else the default kinds) when the flag is given (else when it has none).
agent::AgentConfig PlanConfig(const PlanCommandOptions& options, agent::AgentConfig config) {
  if (!config.probing.fleet) config.probing.fleet = probing::FleetConfig{};
  const bool follows_plan =
      std::any_of(config.probing.probes.begin(), config.probing.probes.end(),
                  [](const probing::ProbeConfig& p) { return p.peers.empty(); });
  if (!options.kinds.empty() || !follows_plan) {
    std::vector<std::string> kinds = Unique(options.kinds);
    if (kinds.empty()) kinds.assign(std::begin(kDefaultPlanKinds), std::end(kDefaultPlanKinds));
    config.probing.probes.clear();
    for (const auto& kind : kinds) {
      if (!probe::ParseProbeKind(kind)) throw PlanError("unknown probe kind " + kind);
      probing::ProbeConfig entry;
      entry.kind = kind;
      config.probing.probes.push_back(std::move(entry));
    }
  }
  return config;
}

fleet::PlanOptions Options(const PlanCommandOptions& options, const agent::AgentConfig& config) {
  const probing::FleetConfig fleet_config = config.probing.fleet.value_or(probing::FleetConfig{});
  fleet::PlanOptions plan;
  plan.peers_per_rail = options.peers_per_rail.value_or(fleet_config.peers_per_rail);
  plan.seed = options.seed.value_or(fleet_config.seed);
  plan.epoch = options.epoch ? *options.epoch
                             : fleet::EpochAt(std::chrono::system_clock::now(), fleet_config.epoch);
  return plan;
}

std::string SelfOf(const PlanCommandOptions& options, const agent::AgentConfig& config) {
  if (options.self) return *options.self;
  if (config.probing.fleet && config.probing.fleet->self) return *config.probing.fleet->self;
  throw PlanError("--self: name this host's target (or set fleet.self in --config.file)");
}

}  // namespace

std::vector<PlanCommandProbe> ProbesOfPlan(const agent::AgentConfig& config,
                                           const std::vector<std::string>& rails,
                                           const std::vector<fleet::PlannedPair>& pairs) {
  // The agent's own expansion, over rails that carry only their names: the plan needs no more.
  std::vector<probe::ProbeRail> probe_rails;
  for (const auto& name : rails) {
    probe::ProbeRail rail;
    rail.name = name;
    probe_rails.push_back(std::move(rail));
  }
  std::vector<PlanCommandProbe> probes;
  for (const auto& planned : probing::PlanFleetProbes(config.probing, probe_rails, pairs)) {
    probes.push_back({planned.job.peer, probe::RailLabel(planned.job.rails), planned.job.kind});
  }
  std::sort(probes.begin(), probes.end());
  // Entries of one kind that differ only in what they run (sizes, memory) probe the same pairs.
  probes.erase(std::unique(probes.begin(), probes.end()), probes.end());
  return probes;
}

std::string FormatPlanJson(const std::string& self, std::uint64_t epoch,
                           const std::vector<PlanCommandProbe>& probes) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& probe : probes) {
    list.push_back({{"peer", probe.peer}, {"rail", probe.rail}, {"kind", probe.kind}});
  }
  const nlohmann::ordered_json json = {
      {"self", self}, {"epoch", epoch}, {"probes", std::move(list)}};
  return json.dump(2) + "\n";
}

std::string FormatPlanText(const std::vector<PlanCommandProbe>& probes) {
  std::string text;
  for (const auto& probe : probes) text += probe.peer + " " + probe.rail + " " + probe.kind + "\n";
  return text;
}

int RunPlanCommand(const PlanCommandOptions& options, std::ostream& out, std::ostream& err) {
  const CommandSetup setup("plan", err);
  if (!setup.OutputIsOneOf(options.output, {"text", "json"})) return kExitCouldNotRun;
  return setup.Run([&] {
    const agent::AgentConfig config = CommandSetup::LoadConfig(options.config_file);
    const std::string self = SelfOf(options, config);
    const auto targets = ReadPeersFile(options.peers_file);
    const auto rails = PlanRails(options, config, FindSelf(targets, self, options.peers_file));
    const agent::AgentConfig plan_config = PlanConfig(options, config);
    const auto plan_options = Options(options, config);
    const auto plan = fleet::PlanForHost(targets, self, rails, plan_options);
    const auto probes = ProbesOfPlan(plan_config, rails, plan);
    out << (options.output == "json" ? FormatPlanJson(self, plan_options.epoch, probes)
                                     : FormatPlanText(probes));
    return kExitOk;
  });
}

}  // namespace rail::commands
