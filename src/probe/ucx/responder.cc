// The responder's side of the probes: echoing pings, receiving AM data and giving RMA targeted at
// this side the progress that software transports (tcp) need, while sleeping on the worker's
// event fd whenever nothing happens.
#include <algorithm>
#include <cstring>

#include "probe/ucx/side.h"

namespace rail::probe {

void UcxProbeSide::RecordServeError(ucs_status_t status) {
  ++counters_.errors;
  try {
    counters_.last_error = detail::UcxReason(status);
  } catch (...) {  // out of memory for a short string: the count still says it
  }
}

ServeCounters UcxProbeSide::Counters() const {
  ServeCounters counters = counters_;
  counters.errors += echo_sends_.failed;
  if (echo_sends_.failed > 0 && counters.last_error.empty()) {
    counters.last_error = detail::UcxReason(echo_sends_.first_error);
  }
  return counters;
}

void UcxProbeSide::PostPingReceive() {
  if (!detail::PostTagReceive(worker_.get(), &ping_, buffer_.data(), buffer_.bytes(), kPingTag)) {
    RecordServeError(ping_.status);
    ping_.done = false;  // nothing to echo; the next Serve call posts again
  }
}

void UcxProbeSide::EchoCompletedPing() {
  const ucs_status_t status = ping_.status;
  ping_.done = false;
  if (status == UCS_ERR_CANCELED) return;
  // A ping larger than the buffer arrives truncated: echo nothing, so that the initiator learns
  // the size problem at once rather than by a timeout.
  const std::size_t echo_bytes = status == UCS_OK ? ping_.info.length : 0;
  if (status != UCS_OK) RecordServeError(status);
  if (!endpoint_) {
    RecordServeError(UCS_ERR_NOT_CONNECTED);
  } else {
    ucp_request_param_t param = echo_sends_.SendParam();
    void* request = ucp_tag_send_nbx(endpoint_.get(), buffer_.data(), echo_bytes, kPongTag, &param);
    if (UCS_PTR_IS_ERR(request)) {
      RecordServeError(UCS_PTR_STATUS(request));
    } else {
      ++counters_.pings_echoed;
    }
  }
  PostPingReceive();
}

void UcxProbeSide::Serve(const std::atomic<bool>& stop, std::chrono::nanoseconds busy_until_idle) {
  if (ping_.request == nullptr && !ping_.done) PostPingReceive();
  Clock::time_point last_event = Clock::now();
  while (!stop.load(std::memory_order_relaxed)) {
    bool active = worker_.Progress();
    if (ping_.done) {
      EchoCompletedPing();
      active = true;
    }
    const Clock::time_point now = Clock::now();
    if (active) {
      last_event = now;
      continue;
    }
    if (now - last_event < busy_until_idle) continue;

    // Idle: sleep until the worker's fd signals, a Wake(), or the poll interval passes (to
    // look at `stop`).
    ucs_status_t armed = UCS_OK;
    const bool woken = worker_.SleepUntilEvent(kIdlePollInterval, &armed);
    if (armed != UCS_OK && armed != UCS_ERR_BUSY && counters_.last_error.empty()) {
      RecordServeError(armed);
    }
    if (woken) last_event = Clock::now();
  }
  detail::CancelTagReceive(worker_.get(), &ping_);
}

ucs_status_t UcxProbeSide::OnAmMessage(void* arg, const void* /*header*/,
                                       std::size_t /*header_length*/, void* data,
                                       std::size_t length,
                                       const ucp_am_recv_param_t* param) noexcept {
  auto* self = static_cast<UcxProbeSide*>(arg);
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
    if (length > self->buffer_.bytes()) {
      // Returned to the sender: its send completes with this status.
      self->RecordServeError(UCS_ERR_MESSAGE_TRUNCATED);
      return UCS_ERR_MESSAGE_TRUNCATED;
    }
    ucp_request_param_t receive_param{};
    receive_param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    receive_param.cb.recv_am = &UcxProbeSide::OnAmReceived;
    receive_param.user_data = self;
    void* request = ucp_am_recv_data_nbx(self->worker_.get(), data, self->buffer_.data(), length,
                                         &receive_param);
    if (request == nullptr) {
      ++self->counters_.am_messages;
      self->counters_.am_bytes += length;
    } else if (UCS_PTR_IS_ERR(request)) {
      self->RecordServeError(UCS_PTR_STATUS(request));
    }
    // The receive was started (or failed): UCX owns the descriptor from here on.
    return UCS_OK;
  }
  // Eager: the payload is already here; copy it as an application would, then UCX frees it.
  std::memcpy(self->buffer_.data(), data, std::min(length, self->buffer_.bytes()));
  ++self->counters_.am_messages;
  self->counters_.am_bytes += length;
  return UCS_OK;
}

void UcxProbeSide::OnAmReceived(void* request, ucs_status_t status, std::size_t length,
                                void* user_data) noexcept {
  auto* self = static_cast<UcxProbeSide*>(user_data);
  if (status == UCS_OK) {
    ++self->counters_.am_messages;
    self->counters_.am_bytes += length;
  } else {
    self->RecordServeError(status);
  }
  ucp_request_free(request);
}

}  // namespace rail::probe
