// The probing service: everything of the agent that runs on threads of its own. It owns the probe
// worker's supervision, the responder, the probe runner, the plan's application and the fleet
// planner's thread; it is started once, reconfigured by Apply (a reload) and stopped once, and it
// never calls back into its owner.
//
// Scrapes read it through Status(): a value assembled from each part's own snapshot, each behind
// a lock held for a copy only. No lock a scrape takes is ever held across a probe, a worker
// (re)start, a responder session or a re-plan; the parts a reload may replace are shared, so a
// scrape that took one keeps it alive.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/fleet/plan.h"
#include "rail/fleet/status.h"
#include "rail/peer/responder.h"
#include "rail/probe/result_store.h"
#include "rail/probe/worker.h"
#include "rail/probing/config.h"
#include "rail/probing/wiring.h"
#include "rail/sysfs/filesystem.h"

namespace rail::probing {

// How long the agent's stop may take, from SIGTERM to the last thread joined: one deadline the
// agent hands to every part that waits (the web server's drain, a discovery fetch, a probe
// worker's call and exit), not a sum of their own timeouts. systemd's TimeoutStopSec (20 s) and
// the DaemonSet's terminationGracePeriodSeconds (30 s) leave room beyond it.
inline constexpr std::chrono::seconds kStopDeadline{10};

class FleetPlanner;
class ProbeRunner;

struct ServiceOptions {
  WorkerSettings worker;
  bool peer_insecure = false;  // --peer.insecure
  DeviceFilter device_filter;  // --collector.infiniband.device-include/-exclude
  // Draws the probes' jitter; each plan's runner gets seed + the plan's sequence number, so a
  // test on a fake clock repeats its schedules.
  std::uint64_t seed = 1;
  // The agent's stop request, set by its signal thread at any moment (start included): every
  // wait of Start looks at it. May be null.
  const std::atomic<bool>* stop_requested = nullptr;
};

// What scrapes read: each part's state now.
struct ServiceStatus {
  std::optional<probe::WorkerStatus> worker;      // nullopt: no worker was started
  std::optional<peer::ResponderStats> responder;  // nullopt: no responder runs
  std::optional<fleet::FleetStatus> fleet;        // nullopt: no fleet section
  std::optional<bool> peer_secret_loaded;         // nullopt: no secret_file configured
};

class ProbingService {
 public:
  ProbingService(ProbingConfig config, ServiceOptions options, const sysfs::Filesystem& sys,
                 const base::Clock& clock, probe::ResultStore& results);
  ~ProbingService();  // Stop()
  ProbingService(const ProbingService&) = delete;
  ProbingService& operator=(const ProbingService&) = delete;

  // Starts, in this order, the worker (when UCX is needed), the responder, the runner and the
  // fleet planner. Throws ConfigError for a configuration that cannot run (a responder address
  // that cannot be bound, probes without a secret, a plan over budget). Returns early when
  // options.stop_requested is set.
  void Start();
  // Stops the fleet planner (a discovery fetch under way abandoned), then the runner (in-flight
  // probes cancelled), then the responder (every session refused with `shutdown`), then the
  // worker (waited for). Whatever still waits at `by` (a worker call, the worker's exit) ends
  // then. Idempotent.
  void Stop(const base::Deadline& by);
  void Stop();  // by StopDeadline()
  // kStopDeadline from now on the service's clock: the one deadline of the agent's whole stop.
  base::Deadline StopDeadline() const;

  // A reload: applies `next` when only reloadable settings differ (peers, probes, fleet,
  // budget), keeping the series of the probes still planned. nullopt when applied; otherwise
  // the reason it was refused, with the running configuration unchanged.
  std::optional<std::string> Apply(const ProbingConfig& next);
  // Why `next` cannot be applied without a restart; nullopt when it can.
  std::optional<std::string> RestartOnlyChange(const ProbingConfig& next) const;

  ServiceStatus Status() const;
  // One part of Status() each: a scrape reads every part once, from its own collector.
  std::optional<probe::WorkerStatus> WorkerState() const;
  std::optional<peer::ResponderStats> ResponderState() const;
  std::optional<fleet::FleetStatus> FleetState() const;
  std::optional<bool> PeerSecretLoaded() const { return peer_secret_loaded_; }
  std::uint16_t ResponderPort() const;  // 0 when no responder runs
  // The UCX of the probe worker (the handshake's and build_info's), kUnknownUcxVersion when none
  // can tell.
  std::string UcxVersion() const { return ucx_version_; }
  std::optional<probe::WorkerCapabilities> WorkerCapabilities() const;
  const std::vector<probe::ProbeRail>& rails() const;

 private:
  bool StopRequested() const;
  std::optional<std::string> SecretChange(const ProbingConfig& next) const;
  void StartWiring();
  void StartResponder();
  void CheckProbesCanRun(const ProbingConfig& config) const;
  void StartFleet();
  // Re-makes the runner for `config` and the fleet's `pairs`, withdrawing the series no longer
  // planned. Throws ConfigError when the scheduler refuses the jobs. Under plan_mutex_.
  void ApplyPlanLocked(const ProbingConfig& config, const std::vector<fleet::PlannedPair>& pairs);
  void OnFleetPlan(const std::vector<fleet::PlannedPair>& pairs);

  const ServiceOptions options_;
  const sysfs::Filesystem& sys_;
  const base::Clock& clock_;
  probe::ResultStore& results_;
  std::optional<bool> peer_secret_loaded_;
  std::string ucx_version_;
  std::atomic<bool> stopped_{false};

  std::mutex apply_mutex_;  // reloads, one at a time
  // Start's, Apply's and the fleet planner's: the running configuration and the runner.
  mutable std::mutex plan_mutex_;
  ProbingConfig config_;
  std::unique_ptr<ProbeWiring> wiring_;  // when anything probes or responds; owns the worker
  std::unique_ptr<ProbeRunner> runner_;
  std::uint64_t plans_applied_ = 0;

  // The parts scrapes read; the lock is held to copy a pointer, never across a call.
  mutable std::mutex parts_mutex_;
  std::shared_ptr<peer::Responder> responder_;
  std::shared_ptr<FleetPlanner> planner_;
};

}  // namespace rail::probing
