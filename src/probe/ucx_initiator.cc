// The initiator's operations: windowed put/get/AM throughput and tagged ping-pong RTT. The calling
// thread busy-progresses the worker while data moves, as ucx_perftest does: sleeping on events
// between completions would measure the wake-up latency instead of the rail.
#include <algorithm>

#include "rail/probe/ucx_session.h"

namespace rail::probe {

namespace {

using Clock = std::chrono::steady_clock;

bool Cancelled(const std::atomic<bool>* cancel) {
  return cancel != nullptr && cancel->load(std::memory_order_relaxed);
}

double SecondsBetween(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

}  // namespace

bool UcxProbeSide::CheckReadyToInitiate(bool needs_remote_memory, std::size_t message_bytes,
                                        std::string* reason, std::string* message) const {
  if (!endpoint_) {
    *reason = "not_connected";
    *message = "no endpoint: call Connect first";
    return false;
  }
  if (message_bytes > buffer_bytes_) {
    *reason = "invalid_argument";
    *message = "message of " + std::to_string(message_bytes) +
               " bytes exceeds the local buffer of " + std::to_string(buffer_bytes_) + " bytes";
    return false;
  }
  if (needs_remote_memory && !remote_key_) {
    *reason = "not_connected";
    *message = "no remote memory: call SetRemoteMemory first";
    return false;
  }
  if (needs_remote_memory && message_bytes > remote_bytes_) {
    *reason = "invalid_argument";
    *message = "message of " + std::to_string(message_bytes) +
               " bytes exceeds the remote buffer of " + std::to_string(remote_bytes_) + " bytes";
    return false;
  }
  return true;
}

bool UcxProbeSide::PostOperation(UcxOperation operation, std::size_t message_bytes) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &UcxProbeSide::OnSendComplete;
  param.user_data = &tracker_;
  ++tracker_.posted;
  void* request = nullptr;
  switch (operation) {
    case UcxOperation::kPut:
      request = ucp_put_nbx(endpoint_.get(), buffer_, message_bytes, remote_address_,
                            remote_key_.get(), &param);
      break;
    case UcxOperation::kGet:
      request = ucp_get_nbx(endpoint_.get(), buffer_, message_bytes, remote_address_,
                            remote_key_.get(), &param);
      break;
    case UcxOperation::kAm:
      // Forcing rendezvous for large messages makes the probe take the zero-copy path that
      // applications' large AM transfers take (RDMA read/write on a NIC), whatever UCX's
      // eager/rendezvous threshold estimate for the transport says.
      if (message_bytes >= kAmRendezvousFromBytes) {
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
        param.flags = UCP_AM_SEND_FLAG_RNDV;
      }
      request =
          ucp_am_send_nbx(endpoint_.get(), kProbeAmId, nullptr, 0, buffer_, message_bytes, &param);
      break;
  }
  if (request == nullptr) {  // completed in place; UCX does not call the callback then
    tracker_.Complete(UCS_OK);
    return true;
  }
  if (UCS_PTR_IS_ERR(request)) {
    tracker_.Complete(UCS_PTR_STATUS(request));
    return false;
  }
  return true;
}

std::string UcxProbeSide::WaitForCompletions(std::uint64_t target, Clock::time_point deadline,
                                             const std::atomic<bool>* cancel,
                                             std::string* message) {
  while (tracker_.completed < target) {
    ucp_worker_progress(worker_.get());
    if (endpoint_status_ != UCS_OK) {
      *message = std::string("endpoint failed: ") + ucs_status_string(endpoint_status_);
      return detail::UcxReason(endpoint_status_);
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
    ucp_worker_progress(worker_.get());
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

bool UcxProbeSide::DrainAfterAbort(std::string* why) {
  if (!endpoint_) return true;
  const Clock::time_point limit = Clock::now() + kAbortDrainLimit;
  Clock::time_point last_completion = Clock::now();
  std::uint64_t completed = tracker_.completed;
  while (tracker_.completed < tracker_.posted) {
    if (endpoint_status_ != UCS_OK) {
      *why = std::string("endpoint failed: ") + ucs_status_string(endpoint_status_);
      return false;
    }
    const Clock::time_point now = Clock::now();
    if (now - last_completion >= kAbortDrainIdle || now >= limit) {
      *why = std::to_string(tracker_.posted - tracker_.completed) +
             " operations were still outstanding when the endpoint was closed";
      return false;
    }
    ucp_worker_progress(worker_.get());
    if (tracker_.completed != completed) {
      completed = tracker_.completed;
      last_completion = Clock::now();
    }
  }
  // Local completion of a put only means the data left this side; the flush completes once the
  // peer has acknowledged every operation.
  std::string message;
  const std::string reason =
      FlushEndpoint(std::min(limit, Clock::now() + kAbortDrainIdle), nullptr, &message);
  if (!reason.empty()) {
    *why =
        "the peer did not acknowledge every operation before the endpoint was closed: " + message;
    return false;
  }
  return true;
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

  std::string reason;
  std::string message;
  // Untimed warm-up: one window and a flush. The first operations complete the wire-up (tcp
  // connects lazily, RDMA transports exchange QP numbers) and register the buffers, which a
  // steady-state figure must not include; ucx_perftest warms up likewise.
  tracker_ = OperationTracker{};
  std::uint64_t posted = 0;
  const Clock::time_point warmup_deadline = Clock::now() + drain_timeout_;
  for (unsigned index = 0; index < window; ++index) {
    ++posted;
    if (!PostOperation(operation, message_bytes)) break;
  }
  reason = WaitForCompletions(posted, warmup_deadline, cancel, &message);
  if (reason.empty()) reason = FlushEndpoint(warmup_deadline, cancel, &message);
  if (reason.empty() && tracker_.failed > 0) {
    message = std::string("warm-up operation failed: ") + ucs_status_string(tracker_.first_error);
    reason = detail::UcxReason(tracker_.first_error);
  }

  Clock::time_point start = Clock::now();
  Clock::time_point end = start;
  if (reason.empty()) {
    tracker_ = OperationTracker{};
    posted = 0;
    start = Clock::now();
    const Clock::time_point stop_posting_at = start + duration;
    while (true) {
      // At most one window per pass, so that operations completing in place cannot keep this
      // loop from looking at the clock.
      for (unsigned index = 0;
           index < window && posted - tracker_.completed < window && tracker_.failed == 0;
           ++index) {
        ++posted;
        PostOperation(operation, message_bytes);
      }
      ucp_worker_progress(worker_.get());
      if (tracker_.failed > 0 || endpoint_status_ != UCS_OK) break;
      if (Cancelled(cancel)) {
        reason = "cancelled";
        message = "cancelled while posting";
        break;
      }
      if (Clock::now() >= stop_posting_at) break;
    }
    if (reason.empty()) {
      const Clock::time_point drain_deadline = Clock::now() + drain_timeout_;
      reason = WaitForCompletions(posted, drain_deadline, cancel, &message);
      // For put, the flush is what says the data reached the remote memory; for get and AM it
      // is cheap and keeps the three measurements alike.
      if (reason.empty()) reason = FlushEndpoint(drain_deadline, cancel, &message);
    }
    end = Clock::now();
    if (reason.empty() && tracker_.failed > 0) {
      message = std::to_string(tracker_.failed) + " operations failed, the first with " +
                ucs_status_string(tracker_.first_error);
      reason = detail::UcxReason(tracker_.first_error);
    }
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

std::string UcxProbeSide::PingPong(std::size_t message_bytes, Clock::time_point deadline,
                                   const std::atomic<bool>* cancel, Clock::time_point* echoed_at,
                                   std::string* message) {
  // The echo lands in the upper half of the buffer when it fits, so that the ping's source is
  // never overwritten while UCX may still read it (contents are meaningless either way).
  char* ping_buffer = static_cast<char*>(buffer_);
  char* pong_buffer =
      2 * message_bytes <= buffer_bytes_ ? ping_buffer + message_bytes : ping_buffer;
  if (!PostTagReceive(&pong_, pong_buffer, message_bytes, kPongTag)) {
    *message = "posting the echo receive failed";
    return detail::UcxReason(pong_.status);
  }
  const std::uint64_t target = tracker_.completed + 1;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &UcxProbeSide::OnSendComplete;
  param.user_data = &tracker_;
  ++tracker_.posted;
  void* request = ucp_tag_send_nbx(endpoint_.get(), ping_buffer, message_bytes, kPingTag, &param);
  if (request == nullptr) {
    tracker_.Complete(UCS_OK);
  } else if (UCS_PTR_IS_ERR(request)) {
    tracker_.Complete(UCS_PTR_STATUS(request));
  }

  std::string reason;
  bool echoed = pong_.done;
  if (echoed) *echoed_at = Clock::now();
  while (!(echoed && tracker_.completed >= target) && tracker_.failed == 0) {
    ucp_worker_progress(worker_.get());
    if (!echoed && pong_.done) {
      *echoed_at = Clock::now();
      echoed = true;
      continue;
    }
    if (endpoint_status_ != UCS_OK) {
      *message = std::string("endpoint failed: ") + ucs_status_string(endpoint_status_);
      reason = detail::UcxReason(endpoint_status_);
    } else if (Cancelled(cancel)) {
      *message = "cancelled while waiting for the echo";
      reason = "cancelled";
    } else if (Clock::now() >= deadline) {
      *message = "no echo within the drain timeout";
      reason = "timeout";
    }
    if (!reason.empty()) break;
  }
  if (reason.empty() && tracker_.failed > 0) {
    *message = std::string("ping send failed: ") + ucs_status_string(tracker_.first_error);
    reason = detail::UcxReason(tracker_.first_error);
  }
  if (!reason.empty()) {
    CancelTagReceive(&pong_);
    return reason;
  }
  if (pong_.status != UCS_OK) {
    *message = std::string("echo receive failed: ") + ucs_status_string(pong_.status);
    return detail::UcxReason(pong_.status);
  }
  if (pong_.info.length != message_bytes) {
    *message = "echo of " + std::to_string(pong_.info.length) + " bytes for a ping of " +
               std::to_string(message_bytes) + " (the responder's buffer is smaller?)";
    return "echo_size";
  }
  return {};
}

RttOutcome UcxProbeSide::RunRtt(std::size_t message_bytes, std::chrono::nanoseconds duration,
                                std::size_t max_samples, const std::atomic<bool>* cancel) {
  RttOutcome outcome;
  if (!CheckReadyToInitiate(false, message_bytes, &outcome.error_reason, &outcome.error_message)) {
    return outcome;
  }
  tracker_ = OperationTracker{};
  std::string reason;
  std::string message;
  Clock::time_point echoed_at;
  // Untimed warm-up round trips complete the wire-up, as for throughput.
  for (unsigned round = 0; round < kRttWarmupRoundTrips && reason.empty(); ++round) {
    reason = PingPong(message_bytes, Clock::now() + drain_timeout_, cancel, &echoed_at, &message);
  }
  const Clock::time_point start = Clock::now();
  // Room for a typical second of round trips; no more, so that a short probe does not take
  // megabytes it will not fill (the vector grows when a fast rail needs more).
  outcome.samples_seconds.reserve(std::min<std::size_t>(max_samples, 1 << 16));
  while (reason.empty() && outcome.samples_seconds.size() < max_samples &&
         Clock::now() - start < duration) {
    const Clock::time_point sent_at = Clock::now();
    reason = PingPong(message_bytes, sent_at + drain_timeout_, cancel, &echoed_at, &message);
    if (reason.empty()) outcome.samples_seconds.push_back(SecondsBetween(sent_at, echoed_at));
  }
  if (!reason.empty()) {
    outcome.error_reason = reason;
    outcome.error_message = "rtt: " + message;
    const std::string undrained = AbortEndpoint();
    if (!undrained.empty()) outcome.error_message += " (" + undrained + ")";
  }
  return outcome;
}

}  // namespace rail::probe
