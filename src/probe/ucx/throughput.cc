// The initiator's throughput operations: windowed put/get/AM. The calling thread busy-progresses
// the worker while data moves, as ucx_perftest does: sleeping on events between completions would
// measure the wake-up latency instead of the rail.
#include "probe/ucx/side.h"

namespace rail::probe {

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

std::string UcxProbeSide::WarmUp(UcxOperation operation, std::size_t message_bytes, unsigned window,
                                 const std::atomic<bool>* cancel, std::string* message) {
  // One window and a flush. The first operations complete the wire-up (tcp connects lazily,
  // RDMA transports exchange QP numbers) and register the buffers, which a steady-state figure
  // must not include; ucx_perftest warms up likewise.
  tracker_ = OperationTracker{};
  const Clock::time_point deadline = Clock::now() + drain_timeout_;
  for (unsigned index = 0; index < window; ++index) {
    if (!PostOperation(operation, message_bytes)) break;
  }
  // What was posted drains in the abort that follows.
  if (!staging_error_.empty()) {
    *message = staging_error_;
    return "cuda";
  }
  std::string reason = WaitForCompletions(tracker_.posted, deadline, cancel, message);
  if (reason.empty()) reason = FlushEndpoint(deadline, cancel, message);
  if (reason.empty() && tracker_.failed > 0) {
    *message = std::string("warm-up operation failed: ") + ucs_status_string(tracker_.first_error);
    reason = detail::UcxReason(tracker_.first_error);
  }
  return reason;
}

std::string UcxProbeSide::KeepWindowFull(UcxOperation operation, std::size_t message_bytes,
                                         unsigned window, Clock::time_point stop_posting_at,
                                         const std::atomic<bool>* cancel, std::string* message) {
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
    if (Clock::now() >= stop_posting_at) return {};
  }
}

std::string UcxProbeSide::TimedPhase(UcxOperation operation, std::size_t message_bytes,
                                     unsigned window, std::chrono::nanoseconds duration,
                                     const std::atomic<bool>* cancel, Clock::time_point* start,
                                     Clock::time_point* end, std::string* message) {
  tracker_ = OperationTracker{};
  *start = Clock::now();
  std::string reason =
      KeepWindowFull(operation, message_bytes, window, *start + duration, cancel, message);
  if (reason.empty()) {
    const Clock::time_point drain_deadline = Clock::now() + drain_timeout_;
    reason = WaitForCompletions(tracker_.posted, drain_deadline, cancel, message);
    // For put, the flush is what says the data reached the remote memory; for get and AM it
    // is cheap and keeps the three measurements alike.
    if (reason.empty()) reason = FlushEndpoint(drain_deadline, cancel, message);
  }
  *end = Clock::now();
  if (reason.empty() && tracker_.failed > 0) {
    *message = std::to_string(tracker_.failed) + " operations failed, the first with " +
               ucs_status_string(tracker_.first_error);
    reason = detail::UcxReason(tracker_.first_error);
  }
  return reason;
}

ThroughputOutcome UcxProbeSide::RunThroughput(UcxOperation operation, std::size_t message_bytes,
                                              unsigned window, std::chrono::nanoseconds duration,
                                              const std::atomic<bool>* cancel) {
  ThroughputOutcome outcome;
  if (!CheckReadyToInitiate(operation != UcxOperation::kAm, message_bytes, &outcome.error_reason,
                            &outcome.error_message)) {
    return outcome;
  }
  if (window == 0 || message_bytes == 0) {
    outcome.error_reason = "invalid_argument";
    outcome.error_message = "window and message size must be positive";
    return outcome;
  }
  staging_error_.clear();
  std::string message;
  std::string reason = WarmUp(operation, message_bytes, window, cancel, &message);
  Clock::time_point start = Clock::now();
  Clock::time_point end = start;
  if (reason.empty()) {
    reason = TimedPhase(operation, message_bytes, window, duration, cancel, &start, &end, &message);
  }
  outcome.operations = tracker_.completed - tracker_.failed;
  outcome.bytes = outcome.operations * message_bytes;
  outcome.seconds = SecondsBetween(start, end);
  if (!reason.empty()) {
    outcome.error_reason = reason;
    outcome.error_message = std::string(UcxOperationName(operation)) + ": " + message;
    const std::string undrained = AbortEndpoint();
    if (!undrained.empty()) outcome.error_message += " (" + undrained + ")";
  }
  return outcome;
}

}  // namespace rail::probe
