// What the UCX probe kinds share on the initiator's side, on top of probe_run.h: the checks of
// their parameters, a watchdog that turns the probe's deadline into the cancel flag UCX operations
// poll, and one UCX side together with its control session.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "probe/probe_run.h"
#include "probe/ucx/rail_lanes.h"
#include "probe/ucx/side.h"
#include "rail/probe/ucx.h"

namespace rail::probe::detail {

// Checks what every UCX kind needs; `needs_window` for the throughput kinds. The message size is
// message_sizes_bytes[0] (the runner calls once per size), `default_size` when none is given.
std::optional<std::string> ValidateUcxParams(const ProbeParams& params, bool needs_window,
                                             std::uint64_t default_size);
std::uint64_t MessageSize(const ProbeParams& params, std::uint64_t default_size);

// Sets flag() when the probe's deadline passes or the probe is cancelled. UCX operations poll a
// single flag; this thread is what makes params.timeout and context.cancel end them. It sleeps
// on a condition variable until the deadline, waking every kCancelCheckInterval only because
// context.cancel is a bare atomic that cannot notify.
class DeadlineWatchdog {
 public:
  explicit DeadlineWatchdog(const ProbeDeadline& deadline);
  ~DeadlineWatchdog();
  DeadlineWatchdog(const DeadlineWatchdog&) = delete;
  DeadlineWatchdog& operator=(const DeadlineWatchdog&) = delete;

  const std::atomic<bool>* flag() const { return &fired_; }
  static constexpr std::chrono::milliseconds kCancelCheckInterval{20};

 private:
  void Watch();

  const ProbeDeadline& deadline_;
  std::atomic<bool> fired_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once everything it reads exists
};

// An abort reason of a UCX operation as the probe reports it: an operation cancelled by the
// watchdog becomes "timeout" (the deadline passed) or "cancelled" (shutdown).
std::string ProbeAbortReason(const std::string& reason, const ProbeDeadline& deadline);

// Sets the drain timeout of `side` to what is left of the probe, at most 10 s, so that no single
// wait inside UCX operations outlives the deadline by much even without the watchdog.
void BoundDrainTimeout(UcxProbeSide& side, const ProbeDeadline& deadline);

// One UCX side and its control session with the peer's UcxHandler.
class UcxPeerLink {
 public:
  struct Request {
    std::vector<ProbeRail> rails;  // the side's devices; probe_setup.rail lists their names
    std::uint64_t message_bytes = 0;
    std::size_t local_buffer_bytes = 0;
    std::uint64_t max_bytes = 0;  // declared to the responder
  };

  UcxPeerLink() = default;
  // Closes a still-open endpoint by force: a polite close would need the peer's progress, which
  // an aborted probe cannot count on.
  ~UcxPeerLink();
  UcxPeerLink(const UcxPeerLink&) = delete;
  UcxPeerLink& operator=(const UcxPeerLink&) = delete;

  // Creates the local side, sends probe_setup (of the run's kind) with its worker address, and
  // connects to the peer's side and buffer named in the reply. On failure sets the result's
  // error, false.
  bool Open(const Request& request, InitiatorRun& run);

  UcxProbeSide& side() { return *side_; }
  // Reads the endpoint's lanes now, when it is connected; keeps the previous reading otherwise
  // (an aborted operation closes the endpoint).
  void CaptureLanes();
  const std::vector<TransportLane>& lanes() const { return lanes_; }
  const std::vector<ProbeRail>& rails() const { return rails_; }

  // Closes the endpoint (politely while the responder still serves, unless the probe failed or
  // its deadline passed), then InitiatorRun::FinishSession with `measured`.
  std::optional<nlohmann::json> Finish(nlohmann::json measured, InitiatorRun& run);

 private:
  // Connects the side to the peer's worker and buffer of the setup reply.
  bool ConnectToPeer(const nlohmann::json& reply, ProbeResult* result);

  std::vector<ProbeRail> rails_;
  PeerProbeSession session_;  // declared before side_: the side closes while the peer serves
  std::unique_ptr<UcxProbeSide> side_;
  std::vector<TransportLane> lanes_;
};

// ucx_throughput and ucx_multirail_throughput: one side over the run's rails, one control
// session.
void MeasureOneContextThroughput(InitiatorRun& run);

}  // namespace rail::probe::detail
