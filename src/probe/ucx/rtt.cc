// The initiator's tagged ping-pong. As for throughput, the calling thread busy-progresses: a
// round trip must not include a wake-up.
#include <algorithm>

#include "probe/ucx/side.h"

namespace rail::probe {

std::string UcxProbeSide::WaitForEcho(std::uint64_t target, Clock::time_point deadline,
                                      const std::atomic<bool>* cancel, Clock::time_point* echoed_at,
                                      std::string* message) {
  bool echoed = pong_.done;
  if (echoed) *echoed_at = Clock::now();
  while (!(echoed && tracker_.completed >= target) && tracker_.failed == 0) {
    worker_.Progress();
    if (!echoed && pong_.done) {
      *echoed_at = Clock::now();
      echoed = true;
      continue;
    }
    if (endpoint_.failed()) {
      *message = std::string("endpoint failed: ") + ucs_status_string(endpoint_.status());
      return detail::UcxReason(endpoint_.status());
    }
    if (Cancelled(cancel)) {
      *message = "cancelled while waiting for the echo";
      return "cancelled";
    }
    if (Clock::now() >= deadline) {
      *message = "no echo within the drain timeout";
      return "timeout";
    }
  }
  if (tracker_.failed > 0) {
    *message = std::string("ping send failed: ") + ucs_status_string(tracker_.first_error);
    return detail::UcxReason(tracker_.first_error);
  }
  return {};
}

std::string UcxProbeSide::PingPong(std::size_t message_bytes, Clock::time_point deadline,
                                   const std::atomic<bool>* cancel, Clock::time_point* echoed_at,
                                   std::string* message) {
  // The echo lands in the upper half of the buffer when it fits, so that the ping's source is
  // never overwritten while UCX may still read it (contents are meaningless either way).
  char* ping_buffer = static_cast<char*>(buffer_.data());
  char* pong_buffer =
      2 * message_bytes <= buffer_.bytes() ? ping_buffer + message_bytes : ping_buffer;
  if (!detail::PostTagReceive(worker_.get(), &pong_, pong_buffer, message_bytes, kPongTag)) {
    *message = "posting the echo receive failed";
    return detail::UcxReason(pong_.status);
  }
  const std::uint64_t target = tracker_.completed + 1;
  ucp_request_param_t param = tracker_.SendParam();
  ++tracker_.posted;
  tracker_.Track(ucp_tag_send_nbx(endpoint_.get(), ping_buffer, message_bytes, kPingTag, &param));

  const std::string reason = WaitForEcho(target, deadline, cancel, echoed_at, message);
  if (!reason.empty()) {
    detail::CancelTagReceive(worker_.get(), &pong_);
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
