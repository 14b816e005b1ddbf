// What a responder grants its peers. Another agent is trusted only as far as these limits: an
// over-limit request gets a clear refusal and is counted, and the responder keeps serving others.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rail/base/bulk_concurrency.h"
#include "rail/base/clock.h"
#include "rail/peer/framing.h"
#include "rail/peer/messages.h"

namespace rail::peer {

struct Limits {
  std::size_t max_frame_bytes = kDefaultMaxFrameBytes;
  std::size_t max_concurrent_sessions = 16;
  // Connections one source address may hold open at once (handshaking or in a session), so that
  // one host opening connections and saying nothing cannot take every session slot. An agent
  // probes a peer over a few rails at a time; 0 means no cap beyond max_concurrent_sessions.
  std::size_t max_connections_per_ip = 8;
  std::uint64_t max_bytes_per_probe = std::uint64_t{64} << 30;  // 64 GiB: ~5 s at 100 Gbit/s
  double max_seconds_per_probe = 30;
  // Sustained rate of probe setups one peer may make, and how many it may make back to back
  // (several kinds and rails falling due together). In any window of T seconds a peer gets at
  // most probe_burst_per_peer + probes_per_minute_per_peer * T / 60 probes.
  double probes_per_minute_per_peer = 60;
  std::uint32_t probe_burst_per_peer = 10;
  // Bulk transfers served at once: one per host, or one per rail (bulk_gate.h). Set from the
  // configuration's bulk_concurrency, which the initiator's scheduler reads too.
  base::BulkConcurrency bulk_concurrency = base::kDefaultBulkConcurrency;
  // Added to the running transfer's remaining time in a `busy` reply's retry hint: its set-up,
  // report and drain around the transfer (a UCX context takes a few hundred ms to make).
  std::chrono::milliseconds bulk_retry_grace{500};
  // The served-bulk budget (served_budget.h): of any hour, the share of a rail's time this
  // responder gives its peers' bulk probes, and the bytes the host serves them in all. A setup
  // past either is answered `busy` until enough of the hour's probes have aged out, so that
  // however many peers pick this host its rails mostly carry its own work.
  double max_served_bulk_time_fraction_per_rail = 0.1;               // 6 min of every hour
  std::uint64_t max_served_bytes_per_hour = std::uint64_t{2} << 40;  // 2 TiB

  bool operator==(const Limits&) const = default;
};

// nullopt when every limit is usable; otherwise an error naming the field.
std::optional<std::string> ValidateLimits(const Limits& limits);

// nullopt when `setup` stays within `limits`; otherwise a message for the peer that says which
// limit it exceeded and by how much.
std::optional<std::string> CheckProbeSetup(const Limits& limits, const ProbeSetup& setup);

struct RateDecision {
  bool allowed = false;
  base::Duration retry_after{};  // when refused: the wait until a probe would be allowed
  std::string error;             // when refused: for the peer
};

// A token bucket per peer on an injected clock, kept as the generic cell rate algorithm: each
// peer's state is the time at which its bucket would be full again, so all arithmetic is on
// integer durations and exact. Thread-safe: shared by every session.
class PeerRateLimiter {
 public:
  // Peers whose bucket has refilled are forgotten (a full bucket and no bucket are the same), and
  // while `max_tracked_peers` peers are still refilling new ones are refused, so a flood of peers
  // cannot grow memory without bound.
  PeerRateLimiter(const base::Clock& clock, double per_minute, std::uint32_t burst,
                  std::size_t max_tracked_peers = 4096);

  RateDecision TryAcquire(std::string_view peer);
  std::size_t tracked_peers() const;

 private:
  const base::Clock& clock_;
  const double per_minute_;
  const std::uint32_t burst_;
  const base::Duration emission_interval_;  // one probe's worth of refill
  const base::Duration tolerance_;          // (burst - 1) probes' worth
  const std::size_t max_tracked_peers_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, base::TimePoint> full_again_at_;
};

// Counts concurrent sessions, in all and per source address; a Slot gives its place back when
// destroyed. Thread-safe. Memory is bounded by max_sessions: only addresses holding a slot are
// remembered.
class SessionSlots {
 public:
  class Slot {
   public:
    Slot(Slot&& other) noexcept : owner_(other.owner_), address_(std::move(other.address_)) {
      other.owner_ = nullptr;
    }
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() {
      if (owner_ != nullptr) owner_->Release(address_);
    }

   private:
    friend class SessionSlots;
    Slot(SessionSlots* owner, std::string address) : owner_(owner), address_(std::move(address)) {}
    SessionSlots* owner_;
    std::string address_;
  };

  enum class Refusal { kNone, kTotal, kPerAddress };

  // max_per_address 0: no per-address cap.
  explicit SessionSlots(std::size_t max_sessions, std::size_t max_per_address = 0)
      : max_sessions_(max_sessions), max_per_address_(max_per_address) {}

  // nullopt when all slots, or all of `address`'s, are taken (`refusal` says which). The
  // SessionSlots must outlive every Slot it hands out.
  std::optional<Slot> TryAcquire(const std::string& address = {}, Refusal* refusal = nullptr);
  std::size_t in_use() const;
  // Distinct addresses holding a slot now.
  std::size_t addresses() const;

 private:
  void Release(const std::string& address);

  const std::size_t max_sessions_;
  const std::size_t max_per_address_;
  mutable std::mutex mutex_;
  std::size_t in_use_ = 0;
  std::unordered_map<std::string, std::size_t> per_address_;
};

}  // namespace rail::peer
