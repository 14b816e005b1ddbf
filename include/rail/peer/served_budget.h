// The responder's served-bulk budget: how much of its rails' time and of the host's bytes an
// agent gives its peers' bulk probes (throughput kinds) in any hour, whatever the fleet size.
// Each agent plans its own probes, and the plan spreads them evenly only on average: a host that
// many initiators happen to pick (or a fleet whose probe intervals were set too short) would
// otherwise spend its rails on being measured. A bulk setup that would push one of its rails
// past limits.max_served_bulk_time_fraction_per_rail of the last hour, or the host past
// limits.max_served_bytes_per_hour, is answered `busy` with a retry hint (when enough of the
// hour's probes have aged out), so initiators try again later and nobody counts it a failure.
//
// A probe is charged when admitted, by what its setup declares: its duration on every rail it
// names, and its max_bytes to the host. max_bytes is a cap (the throughput kinds declare 64 GiB
// whatever the rail's speed), so once the probe has ended the charge is settled to the bytes it
// moved where the probe says so (Settle); the time charge stays what was declared, the time the
// rails were given to the peer.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/peer/messages.h"

namespace rail::peer {

// The window both budgets are measured over.
inline constexpr base::Duration kServedBudgetWindow = std::chrono::hours(1);

struct ServedProbe {
  std::vector<std::string> rails;  // the rails of the setup's `rail` field
  base::Duration declared{};       // the setup's duration
  std::uint64_t bytes = 0;         // the setup's max_bytes
};

struct BudgetDecision {
  bool allowed = false;
  std::uint64_t ticket = 0;      // when allowed: for Settle
  base::Duration retry_after{};  // when refused: the wait until the probe would fit
  std::string error;             // when refused: for the peer, naming the budget and the rail
};

// What a bulk setup is charged: its duration on each of its rails, its max_bytes to the host.
ServedProbe ServedProbeOf(const ProbeSetup& setup);

// The bytes a probe moved, where its probe_done `measured` (the initiator's `bytes`) or the
// handler's report (a TCP sink's `bytes_received`) says so; the larger when both do. These come
// from an authenticated peer of the fleet; the probe's declared time stays charged regardless.
std::optional<std::uint64_t> BytesMoved(const nlohmann::json& measured,
                                        const nlohmann::json& report);

// Thread-safe: shared by every session of a responder. Memory is bounded by max_entries probes
// (a setup beyond it is refused until the oldest ages out).
class ServedBudget {
 public:
  ServedBudget(const base::Clock& clock, double max_time_fraction_per_rail,
               std::uint64_t max_bytes_per_hour, std::size_t max_entries = 65536);

  // Admits and charges `probe`, or says when it would fit.
  BudgetDecision TryAdmit(const ServedProbe& probe);
  // Lowers an admitted probe's byte charge to what it moved (never raises it). A ticket whose
  // probe has aged out of the window is ignored.
  void Settle(std::uint64_t ticket, std::uint64_t bytes_moved);

  // Over the last hour, for tests and the log: the declared time charged to `rail`, and the
  // bytes charged to the host.
  base::Duration ServedTime(const std::string& rail) const;
  std::uint64_t ServedBytes() const;

 private:
  struct Entry {
    std::uint64_t ticket = 0;
    base::TimePoint admitted_at;
    ServedProbe probe;
  };

  void ExpireLocked(base::TimePoint now);
  // The first moment at which enough entries have aged out for `probe` to fit; `blocker` names
  // what is over budget now.
  base::TimePoint FitsAtLocked(const ServedProbe& probe, base::TimePoint now,
                               std::string* blocker) const;

  const base::Clock& clock_;
  const base::Duration max_time_per_rail_;
  const std::uint64_t max_bytes_;
  const double max_time_fraction_;
  const std::size_t max_entries_;
  mutable std::mutex mutex_;
  std::deque<Entry> entries_;  // in admission order, so oldest first
  std::map<std::string, base::Duration> time_by_rail_;
  std::uint64_t bytes_ = 0;
  std::uint64_t next_ticket_ = 1;
};

}  // namespace rail::peer
