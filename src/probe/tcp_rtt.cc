#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "probe_run.h"
#include "rail/probe/tcp.h"
#include "tcp_socket.h"

namespace rail::probe {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A probe with large messages would otherwise declare more bytes than any responder allows.
constexpr std::uint64_t kRttMaxBytes = std::uint64_t{1} << 30;

struct Failure {
  std::string reason;
  std::string message;
};

// Blocking I/O in slices: between slices the deadline and cancellation are checked, so a peer
// that stops answering cannot hold the probe beyond params.timeout.
bool CheckDeadline(const detail::ProbeDeadline& deadline, Failure* failure) {
  if (deadline.Cancelled()) {
    *failure = {"cancelled", "probe cancelled"};
    return false;
  }
  if (deadline.Expired()) {
    *failure = {"timeout", "the peer did not echo within the probe's timeout"};
    return false;
  }
  return true;
}

bool SendAll(int fd, const char* data, std::size_t size, const detail::ProbeDeadline& deadline,
             Failure* failure) {
  while (size > 0) {
    const ssize_t sent = send(fd, data, size, MSG_NOSIGNAL);
    if (sent > 0) {
      data += sent;
      size -= static_cast<std::size_t>(sent);
    } else if (sent < 0 && detail::IsRetryable(errno)) {
      if (!CheckDeadline(deadline, failure)) return false;
    } else {
      *failure = {"stream", std::string("send failed: ") + std::strerror(errno)};
      return false;
    }
  }
  return true;
}

bool ReceiveAll(int fd, char* data, std::size_t size, const detail::ProbeDeadline& deadline,
                Failure* failure) {
  while (size > 0) {
    const ssize_t received = recv(fd, data, size, 0);
    if (received > 0) {
      data += received;
      size -= static_cast<std::size_t>(received);
    } else if (received == 0) {
      *failure = {"closed", "the peer closed the echo stream"};
      return false;
    } else if (detail::IsRetryable(errno)) {
      if (!CheckDeadline(deadline, failure)) return false;
    } else {
      *failure = {"stream", std::string("recv failed: ") + std::strerror(errno)};
      return false;
    }
  }
  return true;
}

std::optional<std::string> Validate(const ProbeParams& params) {
  if (params.rails.empty()) return "tcp_rtt needs a rail";
  if (params.duration.count() <= 0) return "duration must be positive";
  if (!params.message_sizes_bytes.empty() &&
      (params.message_sizes_bytes[0] == 0 ||
       params.message_sizes_bytes[0] > kTcpRttMaxMessageBytes)) {
    return "message size must be between 1 and " + std::to_string(kTcpRttMaxMessageBytes) +
           " bytes";
  }
  return std::nullopt;
}

}  // namespace

ProbeResult TcpRttProbe::Run(const ProbeParams& params, const ProbeContext& context) {
  ProbeResult result = detail::NewResult(params);
  result.kind = ProbeKind::kTcpRtt;
  if (std::optional<std::string> invalid = Validate(params)) {
    detail::SetFailure(&result, "invalid_argument", *invalid);
    return result;
  }
  const double cpu_start = ThreadCpuSeconds();
  const detail::ProbeDeadline deadline(params.timeout, context.cancel);
  const detail::CounterCheck counters(context, params);
  const ProbeRail& rail = params.rails.front();
  const std::uint64_t size =
      params.message_sizes_bytes.empty() ? std::uint64_t{8} : params.message_sizes_bytes[0];
  const std::uint64_t round_trips_allowed =
      std::min<std::uint64_t>(kTcpRttMaxRoundTrips + kTcpRttWarmupRoundTrips, kRttMaxBytes / size);
  result.message_size_bytes = size;

  peer::ProbeSetup setup;
  setup.kind = ProbeKindName(ProbeKind::kTcpRtt);
  setup.rail = rail.name;
  setup.message_sizes_bytes = {size};
  setup.duration_seconds = std::chrono::duration<double>(params.duration).count();
  setup.max_bytes = size * round_trips_allowed;
  detail::PeerProbeSession session;
  if (!session.Open(params, context, setup, deadline, &result)) return result;

  std::uint64_t round_trips = 0;
  double seconds = 0;
  {
    std::optional<peer::UniqueFd> socket;
    const std::optional<std::uint16_t> port = session.DataPort();
    peer::NetError error;
    if (!port) {
      detail::SetFailure(&result, "protocol", "the peer's setup reply has no tcp_port");
    } else if (socket = detail::ConnectStream(session.DataHost(), *port, rail, deadline.Remaining(),
                                              &error);
               !socket) {
      detail::SetFailure(&result, error.reason, "echo stream: " + error.message);
    }
    if (socket) {
      detail::SetNoDelay(socket->get());
      std::vector<char> message(size, 'p');
      std::vector<char> echo(size);
      const Clock::time_point start = Clock::now();
      const Clock::time_point end = std::min(start + params.duration, deadline.deadline());
      Clock::time_point now = start;
      const Clock::duration warmup_limit = (end - start) / 10;
      Failure failure;
      while (round_trips < round_trips_allowed && now < end) {
        if (!CheckDeadline(deadline, &failure)) break;
        const Clock::time_point sent_at = Clock::now();
        if (!SendAll(socket->get(), message.data(), message.size(), deadline, &failure) ||
            !ReceiveAll(socket->get(), echo.data(), echo.size(), deadline, &failure)) {
          break;
        }
        now = Clock::now();
        // Slow rails may not finish the warm-up early in the run; their samples still count.
        if (round_trips >= kTcpRttWarmupRoundTrips || now - start >= warmup_limit) {
          result.rtt_samples_seconds.push_back(
              std::chrono::duration<double>(now - sent_at).count());
        }
        ++round_trips;
      }
      seconds = std::chrono::duration<double>(now - start).count();
      if (!failure.reason.empty()) detail::SetFailure(&result, failure.reason, failure.message);
    }
  }  // the echo stream is closed before probe_done

  json measured{{"round_trips", round_trips}, {"bytes_sent", round_trips * size}};
  if (!result.error_reason.empty()) measured["error"] = result.error_reason;
  json report;
  const bool reported = session.Finish(measured, deadline, &report, &result);
  counters.Finish(&result);
  result.local_cpu_seconds = ThreadCpuSeconds() - cpu_start;
  if (reported) result.peer_cpu_seconds = detail::ReportNumber(report, "cpu_seconds");
  result.bytes = round_trips * size;
  result.bytes_sent = result.bytes;
  result.seconds = seconds;
  result.rtt = SummariseInPlace(result.rtt_samples_seconds);
  if (result.error_reason.empty() && !result.rtt) {
    detail::SetFailure(&result, "stream", "no round trip completed");
  }
  if (!result.error_reason.empty()) {
    detail::SetFailure(&result, result.error_reason, result.error_message);
    return result;
  }
  result.success = true;
  result.finished_at = std::chrono::system_clock::now();
  return result;
}

}  // namespace rail::probe
