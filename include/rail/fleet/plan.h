// The deterministic probe plan: which peers this host probes over each rail. A pure function of
// the peer set, the rail, a seed and an epoch, so every agent computes every plan alike without a
// controller and without talking.
//
// Per rail, the hosts on that rail are placed on a ring ordered by a hash of (seed, epoch, rail,
// target); each host probes the k hosts that follow it. So, on every rail:
// * every host probes min(k, n - 1) peers and is probed by as many (in-degree 1..2k holds with
//   room: it is exactly k while n > k);
// * a host joining or leaving changes only the pairs next to it: about 3k of the n*k pairs;
// * a new epoch re-draws the ring, so that over epochs many different pairs are measured.
// Hashes are XXH3 (libxxhash), stable across machines and versions.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/fleet/target.h"

namespace rail::fleet {

inline constexpr unsigned kDefaultPeersPerRail = 3;
// Long enough that rotating peers does not churn Prometheus series (each rotation retires the
// per-peer series of every probe), short enough that a day measures several different peer sets.
inline constexpr std::chrono::hours kDefaultEpochLength{6};

struct PlanOptions {
  unsigned peers_per_rail = kDefaultPeersPerRail;  // k
  std::uint64_t seed = 0;
  std::uint64_t epoch = 0;
};

// One planned pair: this host probes `peer` over `rail`.
struct PlannedPair {
  std::string peer;  // the peer's target address
  std::string rail;
  auto operator<=>(const PlannedPair&) const = default;
};

// The epoch at `now`: whole epoch lengths since the Unix epoch, so agents with synchronised clocks
// agree (they may disagree for the few seconds their clocks differ around a boundary).
std::uint64_t EpochAt(base::WallTime now, std::chrono::seconds epoch_length);

// The pairs `self` probes over each of `self_rails` (sorted by rail, then peer). `self` must be
// one of `targets`' addresses; otherwise the plan is empty (the others do not probe it either).
// Costs O(n) per rail.
std::vector<PlannedPair> PlanForHost(const std::vector<Target>& targets, const std::string& self,
                                     const std::vector<std::string>& self_rails,
                                     const PlanOptions& options);

// Every host's pairs at once, by host address, over `rails` (each host on the rails it lists):
// O(n log n) per rail, for simulations and checks. PlanForFleet(t, r, o)[a] ==
// PlanForHost(t, a, r ∩ rails of a, o) for every address a.
std::map<std::string, std::vector<PlannedPair>> PlanForFleet(const std::vector<Target>& targets,
                                                             const std::vector<std::string>& rails,
                                                             const PlanOptions& options);

}  // namespace rail::fleet
