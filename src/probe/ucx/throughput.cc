// The initiator's throughput operations: windowed put/get/AM. The calling thread busy-progresses
// the worker while data moves, as ucx_perftest does: sleeping on events between completions would
// measure the wake-up latency instead of the rail.
#include <algorithm>
#include <optional>

#include "probe/ucx/side.h"

namespace rail::probe {

namespace {

// The window of a warm-up that reached its limit: what the rail completes in one limit after the
// wire-up, so that the drain fits a limit too, at least 1 and at most `window`. A wire-up that
// took more than half the limit leaves too little time to judge the rate: the window stays.
unsigned WindowForSlowRail(unsigned window,
                           std::optional<std::chrono::steady_clock::time_point> wired_up_at,
                           std::uint64_t completions_since_wire_up,
                           std::chrono::nanoseconds limit) {
  if (!wired_up_at) return 1;
  const double limit_seconds = std::chrono::duration<double>(limit).count();
  const double after_wire_up =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - *wired_up_at).count();
  if (after_wire_up < limit_seconds / 2) return window;
  const auto per_limit = static_cast<std::uint64_t>(static_cast<double>(completions_since_wire_up) /
                                                    after_wire_up * limit_seconds);
  return static_cast<unsigned>(std::clamp<std::uint64_t>(per_limit, 1, window));
}

}  // namespace

bool UcxProbeSide::CheckReadyToInitiate(bool needs_remote_memory, std::size_t message_bytes,
                                        std::string* reason, std::string* message) const {
  if (!endpoint_) {
    return detail::Fail(reason, message, "not_connected", "no endpoint: call Connect first");
  }
  if (message_bytes > buffer_.bytes()) {
    return detail::Fail(reason, message, "invalid_argument",
                        "message of " + std::to_string(message_bytes) +
                            " bytes exceeds the local buffer of " +
                            std::to_string(buffer_.bytes()) + " bytes");
  }
  if (needs_remote_memory && !remote_) {
    return detail::Fail(reason, message, "not_connected",
                        "no remote memory: call SetRemoteMemory first");
  }
  if (needs_remote_memory && message_bytes > remote_.bytes()) {
    return detail::Fail(reason, message, "invalid_argument",
                        "message of " + std::to_string(message_bytes) +
                            " bytes exceeds the remote buffer of " +
                            std::to_string(remote_.bytes()) + " bytes");
  }
  return true;
}

bool UcxProbeSide::PostOperation(UcxOperation operation, std::size_t message_bytes) {
  if (!StageForOperation(operation, message_bytes)) return false;
  ucp_request_param_t param = tracker_.SendParam();
  ++tracker_.posted;
  void* request = nullptr;
  switch (operation) {
    case UcxOperation::kPut:
      request = ucp_put_nbx(endpoint_.get(), buffer_.data(), message_bytes, remote_.address(),
                            remote_.key(), &param);
      break;
    case UcxOperation::kGet:
      request = ucp_get_nbx(endpoint_.get(), buffer_.data(), message_bytes, remote_.address(),
                            remote_.key(), &param);
      break;
    case UcxOperation::kAm:
      // Forcing rendezvous for large messages makes the probe take the zero-copy path that
      // applications' large AM transfers take (RDMA read/write on a NIC), whatever UCX's
      // eager/rendezvous threshold estimate for the transport says.
      if (message_bytes >= kAmRendezvousFromBytes) {
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
        param.flags = UCP_AM_SEND_FLAG_RNDV;
      }
      request = ucp_am_send_nbx(endpoint_.get(), kProbeAmId, nullptr, 0, buffer_.data(),
                                message_bytes, &param);
      break;
  }
  return tracker_.Track(request);
}

std::string UcxProbeSide::WaitForCompletions(std::uint64_t target, Clock::time_point deadline,
                                             const std::atomic<bool>* cancel,
                                             std::string* message) {
  while (tracker_.completed < target) {
    worker_.Progress();
    if (endpoint_.failed()) {
      *message = std::string("endpoint failed: ") + ucs_status_string(endpoint_.status());
      return detail::UcxReason(endpoint_.status());
    }
    if (Cancelled(cancel)) {
      *message = "cancelled with " + std::to_string(target - tracker_.completed) +
                 " operations outstanding";
      return "cancelled";
    }
    if (Clock::now() >= deadline) {
      *message = std::to_string(target - tracker_.completed) +
                 " operations still outstanding after the drain timeout";
      return "timeout";
    }
  }
  return {};
}

std::string UcxProbeSide::FlushEndpoint(Clock::time_point deadline, const std::atomic<bool>* cancel,
                                        std::string* message) {
  ucp_request_param_t param{};  // no callback: polled below
  void* request = ucp_ep_flush_nbx(endpoint_.get(), &param);
  if (request == nullptr) return {};
  if (UCS_PTR_IS_ERR(request)) {
    *message = "ucp_ep_flush_nbx failed";
    return detail::UcxReason(UCS_PTR_STATUS(request));
  }
  std::string reason;
  ucs_status_t status = UCS_INPROGRESS;
  while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS) {
    worker_.Progress();
    if (Cancelled(cancel)) {
      *message = "cancelled during the final flush";
      reason = "cancelled";
      break;
    }
    if (Clock::now() >= deadline) {
      *message = "final flush did not complete within the drain timeout";
      reason = "timeout";
      break;
    }
  }
  // An unfinished flush is left to UCX; the forced close that follows an abort completes it.
  ucp_request_free(request);
  if (reason.empty() && status != UCS_OK) {
    *message = std::string("flush failed: ") + ucs_status_string(status);
    reason = detail::UcxReason(status);
  }
  return reason;
}

std::chrono::nanoseconds UcxProbeSide::PhaseLimit(std::chrono::nanoseconds duration) const {
  const auto share =
      std::chrono::duration_cast<std::chrono::nanoseconds>(duration * kPhaseLimitShareOfDuration);
  return std::min<std::chrono::nanoseconds>(
      drain_timeout_, std::max<std::chrono::nanoseconds>(share, kMinPhaseLimit));
}

std::string UcxProbeSide::WarmUp(UcxOperation operation, std::size_t message_bytes,
                                 unsigned* window, std::chrono::nanoseconds limit,
                                 const std::atomic<bool>* cancel, bool* reached_limit,
                                 std::string* message) {
  // One window and a flush. The first operations complete the wire-up (tcp connects lazily,
  // RDMA transports exchange QP numbers) and register the buffers, which a steady-state figure
  // must not include; ucx_perftest warms up likewise. The window is posted in doubling batches,
  // each once the previous completed, so that a rail too slow for the whole window within the
  // limit has little in flight when the limit ends the warm-up.
  // Counted from here: a previous warm-up (multirail_capacity's WarmUpOnly) may have left
  // operations in flight, whose callbacks still count into the tracker.
  if (tracker_.posted == tracker_.completed) tracker_ = OperationTracker{};
  const std::uint64_t posted_before = tracker_.posted;
  *reached_limit = false;
  const Clock::time_point deadline = Clock::now() + limit;
  // When the first batch (one operation: the wire-up) completed, and the count then.
  std::optional<Clock::time_point> wired_up_at;
  std::uint64_t completed_at_wire_up = 0;
  unsigned batch = 1;
  std::string reason;
  while (tracker_.posted - posted_before < *window) {
    for (unsigned index = 0; index < batch && tracker_.posted - posted_before < *window; ++index) {
      if (!PostOperation(operation, message_bytes)) break;
    }
    // What was posted drains in the abort that follows.
    if (!staging_error_.empty()) {
      *message = staging_error_;
      return "cuda";
    }
    reason = WaitForCompletions(tracker_.posted, deadline, cancel, message);
    if (!reason.empty() || tracker_.failed > 0) break;
    if (!wired_up_at) {
      wired_up_at = Clock::now();
      completed_at_wire_up = tracker_.completed;
    }
    batch *= 2;
  }
  if (reason.empty() && tracker_.failed == 0) reason = FlushEndpoint(deadline, cancel, message);
  if (reason == "timeout") {
    // Not an abort: what is in flight completes in the timed phase, which counts it.
    *reached_limit = true;
    *window =
        WindowForSlowRail(*window, wired_up_at, tracker_.completed - completed_at_wire_up, limit);
    message->clear();
    reason.clear();
  }
  if (reason.empty() && tracker_.failed > 0) {
    *message = std::string("warm-up operation failed: ") + ucs_status_string(tracker_.first_error);
    reason = detail::UcxReason(tracker_.first_error);
  }
  return reason;
}

std::string UcxProbeSide::KeepWindowFull(UcxOperation operation, std::size_t message_bytes,
                                         unsigned window, Clock::time_point stop_posting_at,
                                         const std::atomic<bool>* cancel,
                                         IntervalRecorder& intervals, std::string* message) {
  const std::uint64_t completed_before = tracker_.completed;
  while (true) {
    // At most one window per pass, so that operations completing in place cannot keep this
    // loop from looking at the clock.
    for (unsigned index = 0;
         index < window && tracker_.posted - tracker_.completed < window && tracker_.failed == 0;
         ++index) {
      PostOperation(operation, message_bytes);
    }
    if (!staging_error_.empty()) {
      *message = staging_error_;
      return "cuda";
    }
    worker_.Progress();
    // A failure is reported by the drain that follows.
    if (tracker_.failed > 0 || endpoint_.failed()) return {};
    if (Cancelled(cancel)) {
      *message = "cancelled while posting";
      return "cancelled";
    }
    const Clock::time_point now = Clock::now();
    intervals.Observe(now, (tracker_.completed - completed_before) * message_bytes);
    if (now >= stop_posting_at) return {};
  }
}

std::string UcxProbeSide::TimedPhase(UcxOperation operation, std::size_t message_bytes,
                                     unsigned window, std::chrono::nanoseconds duration,
                                     std::chrono::nanoseconds drain_limit,
                                     const std::atomic<bool>* cancel, ThroughputOutcome* outcome,
                                     std::string* message) {
  // The tracker keeps counting the warm-up's operations still in flight: what completes during
  // the timed phase is what the rail moved in it.
  const std::uint64_t completed_before = tracker_.completed;
  const std::uint64_t failed_before = tracker_.failed;
  const Clock::time_point start = Clock::now();
  outcome->intervals = IntervalRecorder(start, duration, message_bytes);
  std::string reason = KeepWindowFull(operation, message_bytes, window, start + duration, cancel,
                                      outcome->intervals, message);
  if (reason.empty()) {
    const Clock::time_point drain_deadline = Clock::now() + drain_limit;
    reason = WaitForCompletions(tracker_.posted, drain_deadline, cancel, message);
    // For put, the flush is what says the data reached the remote memory; for get and AM it
    // is cheap and keeps the three measurements alike.
    if (reason.empty()) reason = FlushEndpoint(drain_deadline, cancel, message);
    if (reason == "timeout") {
      // The limit ends the measurement, not the run: what completed by now is the result.
      outcome->note =
          "the drain reached its limit of " +
          std::to_string(
              std::chrono::duration_cast<std::chrono::milliseconds>(drain_limit).count()) +
          " ms";
      message->clear();
      reason.clear();
    }
  }
  const std::uint64_t completed = tracker_.completed - completed_before;
  const std::uint64_t failed = tracker_.failed - failed_before;
  outcome->seconds = SecondsBetween(start, Clock::now());
  outcome->operations = completed - failed;
  outcome->bytes = outcome->operations * message_bytes;
  if (reason.empty() && failed > 0) {
    *message = std::to_string(failed) + " operations failed, the first with " +
               ucs_status_string(tracker_.first_error);
    reason = detail::UcxReason(tracker_.first_error);
  }
  return reason;
}

bool UcxProbeSide::CheckThroughputArguments(UcxOperation operation, std::size_t message_bytes,
                                            unsigned window, ThroughputOutcome* outcome) const {
  if (!CheckReadyToInitiate(operation != UcxOperation::kAm, message_bytes, &outcome->error_reason,
                            &outcome->error_message)) {
    return false;
  }
  if (window == 0 || message_bytes == 0) {
    outcome->error_reason = "invalid_argument";
    outcome->error_message = "window and message size must be positive";
    return false;
  }
  return true;
}

void UcxProbeSide::AbortThroughput(UcxOperation operation, const std::string& reason,
                                   const std::string& message, ThroughputOutcome* outcome) {
  outcome->error_reason = reason;
  outcome->error_message = std::string(UcxOperationName(operation)) + ": " + message;
  const std::string undrained = AbortEndpoint();
  if (!undrained.empty()) outcome->error_message += " (" + undrained + ")";
}

ThroughputOutcome UcxProbeSide::WarmUpOnly(UcxOperation operation, std::size_t message_bytes,
                                           unsigned window, std::chrono::nanoseconds duration,
                                           const std::atomic<bool>* cancel) {
  ThroughputOutcome outcome;
  if (!CheckThroughputArguments(operation, message_bytes, window, &outcome)) return outcome;
  staging_error_.clear();
  bool reached_limit = false;
  std::string message;
  const std::string reason = WarmUp(operation, message_bytes, &window, PhaseLimit(duration), cancel,
                                    &reached_limit, &message);
  if (!reason.empty()) AbortThroughput(operation, reason, message, &outcome);
  return outcome;
}

ThroughputOutcome UcxProbeSide::RunThroughput(UcxOperation operation, std::size_t message_bytes,
                                              unsigned window, std::chrono::nanoseconds duration,
                                              const std::atomic<bool>* cancel) {
  ThroughputOutcome outcome;
  if (!CheckThroughputArguments(operation, message_bytes, window, &outcome)) return outcome;
  staging_error_.clear();
  const std::chrono::nanoseconds limit = PhaseLimit(duration);
  unsigned timed_window = window;
  bool warm_up_limited = false;
  std::string message;
  std::string reason =
      WarmUp(operation, message_bytes, &timed_window, limit, cancel, &warm_up_limited, &message);
  if (reason.empty()) {
    reason = TimedPhase(operation, message_bytes, timed_window, duration, limit, cancel, &outcome,
                        &message);
  }
  const std::uint64_t outstanding = tracker_.posted - tracker_.completed;
  if (reason.empty() && outcome.operations == 0 && outstanding > 0) {
    // Nothing at all completed in the time: a dead rail or peer, not a slow one.
    reason = "timeout";
    message = "no operation completed in the timed phase and its drain; " +
              std::to_string(outstanding) + " operations outstanding";
  }
  if (!reason.empty()) {
    AbortThroughput(operation, reason, message, &outcome);
    return outcome;
  }
  if (warm_up_limited) {
    outcome.note = "the warm-up reached its limit: window " + std::to_string(timed_window) +
                   " instead of " + std::to_string(window) +
                   (outcome.note.empty() ? "" : "; " + outcome.note);
  }
  if (outstanding > 0) {
    // Cancelled, not failed: the measurement ended at the drain's limit.
    const std::string undrained = AbortEndpoint();
    outcome.note += (outcome.note.empty() ? "" : "; ") + std::to_string(outstanding) +
                    " operations cancelled" + (undrained.empty() ? "" : " (" + undrained + ")");
  }
  return outcome;
}

}  // namespace rail::probe
