#include "rail/probing/service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include "probing/responder_options.h"
#include "rail/peer/secret.h"
#include "rail/probing/fleet_planner.h"
#include "rail/probing/plan.h"
#include "rail/probing/runner.h"

namespace rail::probing {

namespace {

// Every job the configuration can give: its static probes and, with a fleet, the fullest plan
// (fleet.peers_per_rail peers on every rail), so that no later plan can be refused.
std::vector<schedule::ProbeJob> FullestJobs(const ProbingConfig& config,
                                            const std::vector<probe::ProbeRail>& rails) {
  std::vector<fleet::PlannedPair> fullest;
  if (config.fleet) {
    for (const auto& rail : rails) {
      for (unsigned i = 0; i < config.fleet->peers_per_rail; ++i) {
        fullest.push_back({"planned-peer-" + std::to_string(i) + ":1", rail.name});
      }
    }
  }
  std::vector<schedule::ProbeJob> jobs;
  for (auto& planned : PlanProbes(config, rails)) jobs.push_back(std::move(planned.job));
  for (auto& planned : PlanFleetProbes(config, rails, fullest)) {
    jobs.push_back(std::move(planned.job));
  }
  return jobs;
}

}  // namespace

ProbingService::ProbingService(ProbingConfig config, ServiceOptions options,
                               const sysfs::Filesystem& sys, const base::Clock& clock,
                               probe::ResultStore& results)
    : options_(std::move(options)),
      sys_(sys),
      clock_(clock),
      results_(results),
      config_(std::move(config)) {}

ProbingService::~ProbingService() {
  Stop();
}

bool ProbingService::StopRequested() const {
  return stopped_ || (options_.stop_requested != nullptr && options_.stop_requested->load());
}

void ProbingService::Start() {
  StartWiring();
  if (!wiring_ || StopRequested()) return;
  StartResponder();
  if (StopRequested()) return;
  {
    std::lock_guard lock(plan_mutex_);
    CheckProbesCanRun(config_);
    ApplyPlanLocked(config_, {});
  }
  if (config_.fleet && !StopRequested()) StartFleet();
}

// The probe worker runs when this agent answers probes or runs UCX probes itself, and is started
// first: its hello brings the UCX version that the handshake, the checks and build_info report.
// The agents of a cluster share one secret, so a package can ship none: until it is placed the
// agent serves its inventory and exchanges nothing with peers, rather than fail to start.
void ProbingService::StartWiring() {
  if (Probes(config_)) {
    const auto& path = config_.responder.secret_file;
    std::shared_ptr<const peer::Secret> secret;
    if (path) {
      std::string error;
      secret = peer::LoadSecretFile(*path, &error);
      peer_secret_loaded_ = secret != nullptr;
      if (!secret) {
        spdlog::error(
            "responder.secret_file: {}. This agent runs without peer traffic (no responder, "
            "probes or fleet) until the secret is in place. Every agent of a cluster shares one "
            "secret: make it once (openssl rand -hex 32), copy it to {} on every host (mode 0600 "
            "owned by the agent's user, or 0640 owned by root with the agent's group) and "
            "restart the agent",
            error, *path);
      }
    }
    if (peer_secret_loaded_ != false) {
      auto worker = options_.worker;
      worker.environment =
          UcxQuirkWorkaround(sys_, config_, options_.device_filter, worker.executable);
      wiring_ = std::make_unique<ProbeWiring>(
          sys_, LocalProbeRails(sys_, config_, options_.device_filter), std::move(secret), clock_,
          4096, std::move(worker));
    }
  }
  if (StopRequested()) {
    ucx_version_ = probe::kUnknownUcxVersion;
    return;
  }
  if (wiring_ && (Responds(config_) || HasUcxProbes(config_))) {
    wiring_->StartWorker(options_.stop_requested);
  }
  ucx_version_ =
      wiring_
          ? wiring_->Versions().ucx_version
          : probe::QueryWorkerUcxVersion(probe::FindWorkerExecutable(options_.worker.executable));
}

void ProbingService::StartResponder() {
  const auto& config = config_.responder;
  if (!Responds(config_)) return;
  auto options =
      detail::MakeResponderOptions(config, options_.peer_insecure, *wiring_, sys_, clock_);
  if (!options.secret && !options.insecure) {
    spdlog::warn(
        "responder: no responder.secret_file and no --peer.insecure: every peer will be "
        "refused");
  }
  auto responder = std::make_shared<peer::Responder>(std::move(options), wiring_->Handlers());
  if (std::string error; !responder->Start(&error)) throw ConfigError("responder: " + error);
  spdlog::info("responder listening on port {}", responder->ListeningPort());
  std::lock_guard lock(parts_mutex_);
  responder_ = std::move(responder);
}

void ProbingService::CheckProbesCanRun(const ProbingConfig& config) const {
  if (!config.probes.empty() && !wiring_->secret() &&
      !(config.responder.insecure || options_.peer_insecure)) {
    throw ConfigError("probes need responder.secret_file (or --peer.insecure) to reach peers");
  }
  if (!config.probes.empty() && !Responds(config)) {
    // Probes need a secret, which lives in the responder section; the peers probe us back.
    spdlog::info(
        "probes configured without a responder section: this agent will not answer its "
        "peers' probes");
  }
  const auto& rails = wiring_->rails();
  if (config.fleet) {
    const auto series = MaxFleetProbeSeries(config, rails);
    if (series > config.fleet->max_probe_series) {
      throw ConfigError("fleet: the plan can make " + std::to_string(series) +
                        " per-peer probe series, more than fleet.max_probe_series (" +
                        std::to_string(config.fleet->max_probe_series) +
                        "): lower fleet.peers_per_rail or the probes' message sizes");
    }
  }
  if (const auto error = schedule::ValidateJobs(FullestJobs(config, rails), config.budget)) {
    throw ConfigError(config.fleet ? "probes: with fleet.peers_per_rail " +
                                         std::to_string(config.fleet->peers_per_rail) +
                                         " peers on every rail: " + *error
                                   : "probes: " + *error);
  }
}

void ProbingService::StartFleet() {
  std::vector<std::string> rails;
  for (const auto& rail : wiring_->rails()) rails.push_back(rail.name);
  const auto peer_names = [this] {
    std::map<std::string, std::string> names;
    for (const auto& state : results_.Snapshot()) {
      if (!state.last.peer_name.empty()) names[state.key.peer] = state.last.peer_name;
    }
    return names;
  };
  auto planner = std::make_shared<FleetPlanner>(
      *config_.fleet, MakeDiscoverySources(*config_.fleet), std::move(rails),
      FleetPlanner::Identity{ResponderPort(), detail::OwnName(config_.responder)}, clock_,
      peer_names, [this](const std::vector<fleet::PlannedPair>& pairs) { OnFleetPlan(pairs); });
  planner->Start();
  std::lock_guard lock(parts_mutex_);
  planner_ = std::move(planner);
}

void ProbingService::OnFleetPlan(const std::vector<fleet::PlannedPair>& pairs) {
  std::lock_guard lock(plan_mutex_);
  if (StopRequested()) return;
  try {
    ApplyPlanLocked(config_, pairs);
  } catch (const std::exception& error) {
    spdlog::error("fleet: the new plan could not be scheduled: {}", error.what());
  }
}

void ProbingService::ApplyPlanLocked(const ProbingConfig& config,
                                     const std::vector<fleet::PlannedPair>& pairs) {
  const auto& rails = wiring_->rails();
  auto plan = PlanProbes(config, rails);
  if (config.fleet) {
    auto fleet = PlanFleetProbes(config, rails, pairs);
    std::move(fleet.begin(), fleet.end(), std::back_inserter(plan));
  }
  std::set<std::tuple<std::string, std::string, std::string>> planned;  // kind, peer, rail
  for (const auto& probe : plan) {
    planned.emplace(probe.job.kind, probe.job.peer, probe::RailLabel(probe.job.rails));
  }
  runner_.reset();  // its in-flight runs are cancelled, and say nothing about their rails
  const auto still_planned = [&planned](const std::string& kind, const std::string& peer,
                                        const std::string& rail) {
    return planned.contains({kind, peer, rail});
  };
  results_.Retain(still_planned);
  if (plan.empty()) return;
  const auto jobs = plan.size();
  schedule::SchedulerOptions schedule;
  schedule.budget = config.budget;
  schedule.bulk_concurrency = config.bulk_concurrency;
  schedule.seed = options_.seed + plans_applied_++;
  if (HasUcxProbes(config)) wiring_->StartWorker(options_.stop_requested);
  auto runner =
      std::make_unique<ProbeRunner>(std::move(plan), schedule, config.figures, wiring_->Context(),
                                    wiring_->Probes(), results_, clock_);
  if (std::string error; !runner->Start(&error)) throw ConfigError("probes: " + error);
  runner_ = std::move(runner);
  spdlog::info("scheduled {} probe job(s) over {} rail(s)", jobs, rails.size());
}

base::Deadline ProbingService::StopDeadline() const {
  return base::Deadline::After(clock_, kStopDeadline);
}

void ProbingService::Stop() {
  Stop(StopDeadline());
}

void ProbingService::Stop(const base::Deadline& by) {
  if (stopped_.exchange(true)) return;
  std::shared_ptr<FleetPlanner> planner;
  std::shared_ptr<peer::Responder> responder;
  {
    std::lock_guard lock(parts_mutex_);
    planner = planner_;
    responder = responder_;
  }
  // The planner's thread may be waiting for plan_mutex_ to apply a plan: joined without it.
  if (planner) planner->Stop();
  if (wiring_) wiring_->StopWorkerBy(by);
  {
    std::lock_guard lock(plan_mutex_);
    runner_.reset();
  }
  if (responder) responder->Stop();
  if (wiring_) wiring_->StopWorker();
}

ServiceStatus ProbingService::Status() const {
  return {WorkerState(), ResponderState(), FleetState(), peer_secret_loaded_};
}

std::optional<probe::WorkerStatus> ProbingService::WorkerState() const {
  if (!wiring_ || wiring_->worker() == nullptr) return std::nullopt;
  return wiring_->worker()->Status();
}

std::optional<peer::ResponderStats> ProbingService::ResponderState() const {
  std::shared_ptr<peer::Responder> responder;
  {
    std::lock_guard lock(parts_mutex_);
    responder = responder_;
  }
  if (!responder) return std::nullopt;
  return responder->Snapshot();
}

std::optional<fleet::FleetStatus> ProbingService::FleetState() const {
  std::shared_ptr<FleetPlanner> planner;
  {
    std::lock_guard lock(parts_mutex_);
    planner = planner_;
  }
  if (!planner) return std::nullopt;
  return planner->Status();
}

std::optional<probe::WorkerCapabilities> ProbingService::WorkerCapabilities() const {
  const auto worker = WorkerState();
  if (!worker) return std::nullopt;
  return worker->capabilities;
}

std::uint16_t ProbingService::ResponderPort() const {
  std::lock_guard lock(parts_mutex_);
  return responder_ ? responder_->ListeningPort() : std::uint16_t{0};
}

const std::vector<probe::ProbeRail>& ProbingService::rails() const {
  static const std::vector<probe::ProbeRail> kNone;
  return wiring_ ? wiring_->rails() : kNone;
}

}  // namespace rail::probing
