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
#include "probe/ucx/gpu_placement.h"
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
  // What moved the bytes (ProbeResult::memory_path): "host" for host and pinned host memory;
  // "staged" when either side copied through pinned host memory itself; else from the lanes,
  // "cuda_copy" (UCX staged) or "gpu_direct" (the NIC read device memory).
  std::string MemoryPath() const;
  // The GPU of this side ("" for host memory) and why it was chosen where not by the topology.
  const std::optional<GpuPlacement>& gpu() const { return gpu_; }
  // The time the peer's staging copies of `bytes` took, by the rates in its report: 0 unless
  // the peer staged. A put or AM lands in its pinned buffer and is copied to the device; a get
  // is copied out of the device first.
  double PeerStagingSeconds(const std::optional<nlohmann::json>& report, UcxOperation operation,
                            std::uint64_t bytes) const;
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
  // Places the side on the rails' GPU (memory other than host); false and "cuda" when the
  // driver cannot.
  bool PlaceMemory(const ProbeParams& params, SideMemory* memory, ProbeResult* result);
  // Whether the peer's reply shows a buffer of the requested memory; false and "peer_memory"
  // when not (a responder that predates the field answers without it, having used host memory).
  bool CheckPeerMemory(const nlohmann::json& reply, gpu::MemoryType wanted, ProbeResult* result);

  std::vector<ProbeRail> rails_;
  PeerProbeSession session_;  // declared before side_: the side closes while the peer serves
  std::unique_ptr<UcxProbeSide> side_;
  std::vector<TransportLane> lanes_;
  std::optional<GpuPlacement> gpu_;
  bool peer_staged_ = false;
};

// Fills the result's memory fields from a link (memory_path, gpu_pci_bus_id, and a placement
// note as the message of a run that did not fail); nothing for host memory.
void RecordMemory(const UcxPeerLink& link, ProbeResult* result);

// Reads the GPU's current_link_speed once, half way through the transfer (a GPU lowers its link
// speed when idle: only a reading under load says what the transfer got), unless destroyed
// first.
class MidTransferLinkSpeed {
 public:
  MidTransferLinkSpeed(std::string pci_bus_id, std::chrono::nanoseconds transfer);
  ~MidTransferLinkSpeed();
  MidTransferLinkSpeed(const MidTransferLinkSpeed&) = delete;
  MidTransferLinkSpeed& operator=(const MidTransferLinkSpeed&) = delete;
  // After the transfer: the reading, nullopt when it was not taken.
  std::optional<double> Take();

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<double> speed_;
  std::thread thread_;  // last: starts once everything it reads exists
};

// ucx_throughput and ucx_multirail_throughput: one side over the run's rails, one control
// session.
void MeasureOneContextThroughput(InitiatorRun& run);

}  // namespace rail::probe::detail
