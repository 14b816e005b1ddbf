#include "rail/probing/fleet_planner.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "rail/fleet/duplicates.h"
#include "rail/fleet/self.h"

namespace rail::probing {
namespace {

// The thread wakes at least this often, so that an epoch boundary is seen even when the wall
// clock steps.
constexpr std::chrono::seconds kLongestSleep{30};

std::chrono::seconds UntilNextEpoch(base::WallTime now, std::chrono::seconds length) {
  const auto since_unix = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch());
  return length - since_unix % length;
}

std::map<std::string, std::size_t> PeersByRail(const std::vector<std::string>& rails,
                                               const std::vector<fleet::PlannedPair>& pairs) {
  std::map<std::string, std::size_t> counts;
  for (const auto& rail : rails) counts[rail] = 0;
  for (const auto& pair : pairs) ++counts[pair.rail];
  return counts;
}

// Why the plan is empty, when it is and the fleet has someone else to probe (fleet/status.h).
std::string EmptyPlanReason(std::size_t targets, const std::string& self, bool have_rails,
                            const std::vector<fleet::PlannedPair>& planned,
                            const std::vector<fleet::PlannedPair>& merged) {
  if (targets <= 1 || !merged.empty()) return {};
  if (self.empty()) return "self_not_found";
  if (!have_rails) return "no_local_rails";
  if (planned.empty()) return "no_peer_on_rails";
  return "duplicates_only";
}

}  // namespace

std::vector<std::unique_ptr<fleet::Source>> MakeDiscoverySources(const FleetConfig& config) {
  std::vector<std::unique_ptr<fleet::Source>> sources;
  if (!config.static_targets.empty()) {
    sources.push_back(fleet::MakeStaticSource(config.static_targets));
  }
  for (const auto& file_sd : config.file_sd) sources.push_back(fleet::MakeFileSdSource(file_sd));
  for (const auto& dns : config.dns) sources.push_back(fleet::MakeDnsSource(dns));
  for (const auto& kubernetes : config.kubernetes) {
    sources.push_back(fleet::MakeKubernetesSource(kubernetes));
  }
  return sources;
}

FleetPlanner::FleetPlanner(FleetConfig config, std::vector<std::unique_ptr<fleet::Source>> sources,
                           std::vector<std::string> rails, Identity identity,
                           const base::Clock& clock, PeerNames peer_names, PlanChanged on_change)
    : config_(std::move(config)),
      rails_(std::move(rails)),
      identity_(std::move(identity)),
      clock_(clock),
      peer_names_(std::move(peer_names)),
      on_change_(std::move(on_change)),
      discovery_(std::move(sources), clock) {
  status_.max_probe_series = config_.max_probe_series;
  status_.rails = PeersByRail(rails_, {});
}

FleetPlanner::~FleetPlanner() {
  Stop();
}

void FleetPlanner::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void FleetPlanner::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  abandon_ = true;
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string FleetPlanner::FindSelf(const std::vector<fleet::Target>& targets) {
  std::string error;
  // A configured self is checked against the targets too: one the others do not list is not on
  // their rings, so it would probe peers that never probe it back, or (as PlanForHost does) none.
  const auto self = fleet::ResolveSelf(targets, config_.self,
                                       fleet::LocalIdentity(identity_.responder_port), &error);
  if (!self && error != self_error_ && !targets.empty()) {
    spdlog::warn(
        "fleet: this agent is not among the {} discovered targets ({}): it probes no fleet "
        "peer and no peer probes it until it is",
        targets.size(), error);
  }
  self_error_ = self ? "" : error;
  return self.value_or("");
}

void FleetPlanner::Update() {
  discovery_.Refresh(abandon_);
  if (abandon_) return;
  const auto targets = discovery_.Targets();
  const auto self = FindSelf(targets);
  fleet::PlanOptions options;
  options.peers_per_rail = config_.peers_per_rail;
  options.seed = config_.seed;
  options.epoch = fleet::EpochAt(clock_.WallNow(), config_.epoch);
  const auto planned = self.empty() ? std::vector<fleet::PlannedPair>{}
                                    : fleet::PlanForHost(targets, self, rails_, options);
  const auto& names = LearnNames(targets);
  const auto merged = fleet::MergeDuplicates(planned, names, identity_.name);
  const std::string empty =
      EmptyPlanReason(targets.size(), self, !rails_.empty(), planned, merged.pairs);
  bool changed = false;
  {
    std::lock_guard lock(mutex_);
    if (!empty.empty() && empty != status_.plan_empty) {
      spdlog::warn(
          "fleet: the plan gives this agent no peer although {} targets are discovered: {}",
          targets.size(), empty);
    }
    status_.plan_empty = empty;
    status_.peers = targets.size();
    status_.self = self;
    status_.epoch = options.epoch;
    RecordNames(planned, names, merged.duplicates);
    changed = merged.pairs != status_.pairs;
    if (changed) {
      ++status_.plan_changes;
      status_.pairs = merged.pairs;
      status_.rails = PeersByRail(rails_, merged.pairs);
    }
  }
  if (!changed) return;
  spdlog::info("fleet: epoch {}, {} target(s), self {}: {} planned pair(s)", options.epoch,
               targets.size(), self.empty() ? "not found" : self, merged.pairs.size());
  on_change_(merged.pairs);
}

const std::map<std::string, std::string>& FleetPlanner::LearnNames(
    const std::vector<fleet::Target>& targets) {
  if (peer_names_) {
    for (auto& [target, name] : peer_names_()) known_names_[target] = std::move(name);
  }
  std::erase_if(known_names_, [&targets](const auto& entry) {
    return std::none_of(targets.begin(), targets.end(), [&entry](const fleet::Target& target) {
      return target.address == entry.first;
    });
  });
  return known_names_;
}

void FleetPlanner::RecordNames(const std::vector<fleet::PlannedPair>& planned,
                               const std::map<std::string, std::string>& names,
                               const std::vector<std::string>& duplicates) {
  status_.peer_names.clear();
  for (const auto& pair : planned) {
    if (const auto name = names.find(pair.peer); name != names.end()) {
      status_.peer_names[pair.peer] = name->second;
    }
  }
  if (duplicates == status_.duplicates) return;
  for (const auto& target : duplicates) {
    spdlog::warn(
        "fleet: target {} answers as '{}', already probed under another target (or this agent "
        "itself): not probed twice",
        target, names.at(target));
  }
  status_.duplicates = duplicates;
}

fleet::FleetStatus FleetPlanner::Status() const {
  std::lock_guard lock(mutex_);
  auto status = status_;
  status.sources = discovery_.Status();
  return status;
}

void FleetPlanner::Loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    Update();
    lock.lock();
    auto wake_up = clock_.Now() + kLongestSleep;
    if (const auto next = discovery_.NextRefresh()) wake_up = std::min(wake_up, *next);
    // A second past the boundary, so that EpochAt surely reads the new epoch.
    const auto epoch_end =
        clock_.Now() + UntilNextEpoch(clock_.WallNow(), config_.epoch) + std::chrono::seconds(1);
    wake_up = std::min(wake_up, epoch_end);
    // A wait for a duration of the injected clock: its time points need not be the steady
    // clock's.
    wake_.wait_for(lock, std::max(wake_up - clock_.Now(), base::Duration::zero()),
                   [this] { return stopping_; });
  }
}

}  // namespace rail::probing
