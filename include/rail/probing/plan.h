// The probe plan: local rails as the probes see them, and the configured probes (or the fleet's
// planned pairs) expanded into scheduled jobs.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "rail/fleet/plan.h"
#include "rail/inventory/rails.h"
#include "rail/probe/probe.h"
#include "rail/probing/config.h"
#include "rail/schedule/scheduler.h"

namespace rail::probing {

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
std::vector<PlannedProbe> PlanProbes(const ProbingConfig& config,
                                     const std::vector<probe::ProbeRail>& rails);

// The fleet's probes: each probes[] entry that names no peers, against the peers the plan gives
// each of its rails (a multi-rail kind: against the planned peers of its first rail, over all its
// rails). The peer label is the target. Empty without a fleet section.
std::vector<PlannedProbe> PlanFleetProbes(const ProbingConfig& config,
                                          const std::vector<probe::ProbeRail>& rails,
                                          const std::vector<fleet::PlannedPair>& pairs);

// Per-peer series the fleet's probes can have at most: every planned peer of every rail, at
// every message size, as checked against fleet.max_probe_series.
std::size_t MaxFleetProbeSeries(const ProbingConfig& config,
                                const std::vector<probe::ProbeRail>& rails);

// The rails of each run of `kind` over `rails`: all of them at once for a multi-rail kind, one
// run per rail otherwise.
std::vector<std::vector<probe::ProbeRail>> RunsOver(probe::ProbeKind kind,
                                                    const std::vector<probe::ProbeRail>& rails);

// Runs a probe once per message size; one result per size. Stops after a run the peer refused
// busy: the sizes after it would be refused too, and the retry runs them all.
std::vector<probe::ProbeResult> RunProbeSizes(probe::Probe& probe, const probe::ProbeParams& params,
                                              const probe::ProbeContext& context);

}  // namespace rail::probing
