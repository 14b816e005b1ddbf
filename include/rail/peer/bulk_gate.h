// The responder's admission of bulk transfers (throughput probes). Two bulk transfers served at
// once share the host's CPU and PCIe (or one rail), and each initiator then measures a fraction
// of a healthy rail (issue 11). The gate admits one run at a time per host, or per rail where
// the configuration says the host can feed every rail at once; a setup it refuses is answered
// `busy` with a retry hint, and the initiator tries again later.
//
// A run is what one initiator measures at once: a multi-rail run (multirail_capacity) opens one
// control session per rail, all sharing the setup's run_id, and its sessions are admitted
// together. The run is keyed by the peer's address and its run_id, so that no peer can join
// another's run; a peer that sends no run_id (an agent older than the gate) is one run per
// (address, kind), which admits an old multirail_capacity's sessions together.
//
// Latency probes (the RTT kinds) pass the same gate as shared holders: any number of them at
// once, but none in the scope of a bulk transfer and no bulk transfer in the scope of one. A
// round trip measured beside a bulk transfer measures its queueing (the scheduler keeps an
// agent's own probes apart by the same rule; the gate does it across initiators), and on hosts
// whose CPU drives the transfers (TCP, the lab's veths) a busy-polling ping-pong takes a core
// from the transfer.
//
// Independently of the admission, the gate counts transfers that overlapped another run's
// transfer in the same scope anyway (from the handler's Serve to the end of the session's
// probe): a tripwire that must stay 0.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rail/base/bulk_concurrency.h"
#include "rail/base/clock.h"

namespace rail::peer {

struct BulkRequest {
  std::string run;                 // the run's key: peer address + run_id (see above)
  std::vector<std::string> rails;  // the rails this session's transfer uses
  base::Duration expected{};       // how long the transfer should take (the setup's duration)
  bool latency = false;            // a latency probe: shares the scope with other latency probes
};

struct BulkGateStats {
  std::uint64_t transfers_total = 0;  // bulk transfers that started serving
  std::uint64_t overlaps_total = 0;   // of those, the ones that overlapped another run's
  std::uint64_t busy_total = 0;       // setups refused busy (latency probes included)
};

class BulkGate {
 public:
  // Held by an admitted session for as long as its probe lasts; gives the place back when
  // destroyed. The gate must outlive it.
  class Pass {
   public:
    Pass(Pass&& other) noexcept;
    Pass& operator=(Pass&&) = delete;
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    ~Pass();

    // The handler starts moving data; once per pass.
    void TransferStarted();

   private:
    friend class BulkGate;
    Pass(BulkGate* gate, std::uint64_t id) : gate_(gate), id_(id) {}
    BulkGate* gate_;
    std::uint64_t id_;
  };

  // `retry_grace`: added to a holder's expected remaining time in the retry hint, for its set-up
  // and report (and the initiator's own delays) around the transfer.
  BulkGate(const base::Clock& clock, base::BulkConcurrency concurrency, base::Duration retry_grace);

  // A pass, or nullopt with the wait after which the run(s) in the way should have ended.
  std::optional<Pass> TryEnter(const BulkRequest& request, base::Duration* retry_after);
  BulkGateStats Stats() const;

 private:
  struct Holder {
    std::string run;
    std::vector<std::string> rails;
    base::TimePoint expected_end;
    bool latency = false;
    bool transferring = false;
  };

  bool Conflicts(const Holder& holder, const std::string& run,
                 const std::vector<std::string>& rails, bool latency) const;
  void Release(std::uint64_t id);
  void StartTransfer(std::uint64_t id);

  const base::Clock& clock_;
  const base::BulkConcurrency concurrency_;
  const base::Duration retry_grace_;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, Holder> holders_;  // by pass, one per admitted session
  std::uint64_t next_id_ = 1;
  BulkGateStats stats_;
};

// The rails of a probe_setup's `rail` field ("rail0,rail1"): one per comma, empty names dropped.
std::vector<std::string> SplitRails(const std::string& rail);

}  // namespace rail::peer
