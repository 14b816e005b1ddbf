// A reload of the probing service: what may change while it runs, and how it is applied.
#include <spdlog/spdlog.h>

#include "rail/peer/secret.h"
#include "rail/probing/fleet_planner.h"
#include "rail/probing/plan.h"
#include "rail/probing/runner.h"
#include "rail/probing/service.h"

namespace rail::probing {

// Settings held by what must not close or restart on a reload: the responder's socket and
// sessions, the probe worker, the rails as the probes and the worker see them. docs/
// configuration.md lists them.
std::optional<std::string> ProbingService::RestartOnlyChange(const ProbingConfig& next) const {
  std::lock_guard lock(plan_mutex_);
  if (next.rails != config_.rails || next.discover_rails != config_.discover_rails) {
    return "rails and discover_rails take effect at a restart only";
  }
  if (!(next.responder == config_.responder)) {
    return "the responder section (its address, secret file, limits, name) takes effect at a "
           "restart only";
  }
  if (!(next.figures == config_.figures)) {
    return "the figures section takes effect at a restart only (the checks judge by it too)";
  }
  if (next.bulk_concurrency != config_.bulk_concurrency) {
    return "bulk_concurrency takes effect at a restart only (the responder serves by it)";
  }
  if (next.ucx_device_quirk_workaround != config_.ucx_device_quirk_workaround) {
    return "ucx_device_quirk_workaround takes effect at a restart only (the probe worker's "
           "environment)";
  }
  if (Probes(next) != Probes(config_) || (Probes(config_) && !wiring_)) {
    return "starting or ending probing altogether (the responder, probes and fleet sections) "
           "takes effect at a restart only";
  }
  return std::nullopt;
}

// The secret file is re-read: one that can no longer be read refuses the reload, and a new secret
// takes a restart (the worker and the responder hold it; every agent of a cluster changes it at
// once anyway).
std::optional<std::string> ProbingService::SecretChange(const ProbingConfig& next) const {
  const auto& path = next.responder.secret_file;
  if (!path || !wiring_) return std::nullopt;
  std::string error;
  const auto reread = peer::LoadSecretFile(*path, &error);
  if (!reread) return "responder.secret_file: " + error;
  if (!wiring_->secret() || !peer::SameSecret(*reread, *wiring_->secret())) {
    return "responder.secret_file holds a new secret, which takes effect at a restart only";
  }
  return std::nullopt;
}

std::optional<std::string> ProbingService::Apply(const ProbingConfig& next) {
  std::lock_guard serial(apply_mutex_);
  if (StopRequested()) return "the agent is stopping";
  if (auto reason = RestartOnlyChange(next)) return reason;
  if (auto reason = SecretChange(next)) return reason;
  if (!wiring_) {
    std::lock_guard lock(plan_mutex_);
    config_ = next;  // nothing runs: the peers and probes are the only difference
    return std::nullopt;
  }
  try {
    std::lock_guard lock(plan_mutex_);
    CheckProbesCanRun(next);
  } catch (const std::exception& error) {
    return error.what();
  }
  std::shared_ptr<FleetPlanner> old_planner;
  {
    std::lock_guard lock(parts_mutex_);
    old_planner = planner_;
  }
  // The old plan's pairs keep the fleet's series until the new planner has planned: a reload
  // never withdraws a series that the new configuration still plans.
  const auto pairs = old_planner ? old_planner->Status().pairs : std::vector<fleet::PlannedPair>{};
  if (old_planner) old_planner->Stop();  // its thread may wait for plan_mutex_
  {
    std::lock_guard lock(plan_mutex_);
    config_ = next;
    try {
      ApplyPlanLocked(config_, pairs);
    } catch (const std::exception& error) {
      // Validated above, so the scheduler has no reason left to refuse: say so loudly.
      spdlog::error("reload: the probes could not be scheduled: {}", error.what());
    }
  }
  if (config_.fleet) {
    StartFleet();  // replaces planner_; the old one stays readable until then
  } else {
    std::lock_guard lock(parts_mutex_);
    planner_.reset();
  }
  return std::nullopt;
}

}  // namespace rail::probing
