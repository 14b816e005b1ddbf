// The agent's probing: local rails as the probes see them, the configured probes expanded into
// scheduled jobs, and the runner that starts them when the scheduler says so and files their
// results in the store.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rail/agent/config.h"
#include "rail/fleet/plan.h"
#include "rail/inventory/rails.h"
#include "rail/probe/probe.h"
#include "rail/probe/result_store.h"
#include "rail/schedule/scheduler.h"

namespace rail::agent {

// The UCX device of a rail ("mlx5_0:1" for an RDMA port, the netdev for a TCP rail) and its
// IPv4 address (configured, from its RoCE GID, or, failing both, from the live interface).
std::vector<probe::ProbeRail> MakeProbeRails(const std::vector<inventory::Rail>& rails);

// The message sizes a kind uses when the configuration names none.
std::vector<std::uint64_t> DefaultMessageSizes(probe::ProbeKind kind);

struct PlannedProbe {
  schedule::ProbeJob job;
  probe::ProbeParams params;  // message_sizes_bytes: every size, run one after the other
  std::chrono::milliseconds interval{0};
};

// probes[] x peers x rails (single-rail kinds get one job per rail). Throws ConfigError naming
// the probes[] entry when it names a rail this host does not have. With a fleet section, entries
// that name no peers are left to PlanFleetProbes.
std::vector<PlannedProbe> PlanProbes(const AgentConfig& config,
                                     const std::vector<probe::ProbeRail>& rails);

// The fleet's probes: each probes[] entry that names no peers, against the peers the plan gives
// each of its rails (a multi-rail kind: against the planned peers of its first rail, over all its
// rails). The peer label is the target. Empty without a fleet section.
std::vector<PlannedProbe> PlanFleetProbes(const AgentConfig& config,
                                          const std::vector<probe::ProbeRail>& rails,
                                          const std::vector<fleet::PlannedPair>& pairs);

// Per-peer series the fleet's probes can have at most: every planned peer of every rail, at
// every message size, as checked against fleet.max_probe_series.
std::size_t MaxFleetProbeSeries(const AgentConfig& config,
                                const std::vector<probe::ProbeRail>& rails);

// The rails of each run of `kind` over `rails`: all of them at once for a multi-rail kind, one
// run per rail otherwise.
std::vector<std::vector<probe::ProbeRail>> RunsOver(probe::ProbeKind kind,
                                                    const std::vector<probe::ProbeRail>& rails);

// Runs a probe once per message size; one result per size. Stops after a run the peer refused
// busy: the sizes after it would be refused too, and the retry runs them all.
std::vector<probe::ProbeResult> RunProbeSizes(probe::Probe& probe, const probe::ProbeParams& params,
                                              const probe::ProbeContext& context);

class ProbeRunner {
 public:
  // options.seed is drawn at Start.
  ProbeRunner(std::vector<PlannedProbe> plan, schedule::SchedulerOptions options,
              probe::ProbeContext context, probe::ProbeMaker make_probe, probe::ResultStore& store);
  ~ProbeRunner();
  ProbeRunner(const ProbeRunner&) = delete;
  ProbeRunner& operator=(const ProbeRunner&) = delete;

  // Validates the plan against the budget (error names the job) and starts the runner thread.
  bool Start(std::string* error);
  // Cancels running probes (their own timeouts bound the wait) and joins every thread.
  void Stop();

 private:
  struct Running {
    std::thread thread;
    bool done = false;
    std::uint64_t bytes = 0;
    // The peer refused the run busy: retry after this (its hint) instead of counting a run.
    std::optional<std::chrono::milliseconds> busy_retry_after;
  };
  void Loop();
  void Launch(const std::string& name);
  // Files a run's results; its bytes, or the retry hint when the peer refused it busy.
  std::optional<std::chrono::milliseconds> FileResults(const PlannedProbe& planned,
                                                       std::vector<probe::ProbeResult> results,
                                                       std::uint64_t* bytes);
  const PlannedProbe* Find(const std::string& name) const;

  std::vector<PlannedProbe> plan_;
  schedule::SchedulerOptions options_;
  probe::ProbeContext context_;
  probe::ProbeMaker make_probe_;
  probe::ResultStore& store_;
  base::SteadyClock clock_;
  std::unique_ptr<schedule::Scheduler> scheduler_;
  std::atomic<bool> cancel_{false};

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, Running> running_;
  std::thread loop_;
};

}  // namespace rail::agent
