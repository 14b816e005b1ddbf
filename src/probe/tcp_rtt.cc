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

struct RoundTrips {
  std::uint64_t count = 0;  // warm-up included
  double seconds = 0;
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

bool SendMessage(int fd, const std::vector<char>& message, const detail::ProbeDeadline& deadline,
                 Failure* failure) {
  const auto keep_trying = [&] { return CheckDeadline(deadline, failure); };
  switch (detail::SendAll(fd, message.data(), message.size(), keep_trying)) {
    case detail::SendEnd::kSent:
      return true;
    case detail::SendEnd::kStopped:
      return false;
    case detail::SendEnd::kFailed:
      break;
  }
  *failure = {"stream", std::string("send failed: ") + std::strerror(errno)};
  return false;
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

// Round trips of `size` bytes on the echo stream until the duration or the deadline passes or
// `allowed` were made; the samples go into the result.
RoundTrips PingPong(int fd, std::uint64_t size, std::uint64_t allowed, detail::InitiatorRun& run) {
  const detail::ProbeDeadline& deadline = run.deadline();
  detail::SetNoDelay(fd);
  std::vector<char> message(size, 'p');
  std::vector<char> echo(size);
  const Clock::time_point start = Clock::now();
  const Clock::time_point end = std::min(start + run.params().duration, deadline.deadline().at());
  Clock::time_point now = start;
  const Clock::duration warmup_limit = (end - start) / 10;
  Failure failure;
  RoundTrips done;
  while (done.count < allowed && now < end) {
    if (!CheckDeadline(deadline, &failure)) break;
    const Clock::time_point sent_at = Clock::now();
    if (!SendMessage(fd, message, deadline, &failure) ||
        !ReceiveAll(fd, echo.data(), echo.size(), deadline, &failure)) {
      break;
    }
    now = Clock::now();
    // Slow rails may not finish the warm-up early in the run; their samples still count.
    if (done.count >= kTcpRttWarmupRoundTrips || now - start >= warmup_limit) {
      run.result().rtt_samples_seconds.push_back(
          std::chrono::duration<double>(now - sent_at).count());
    }
    ++done.count;
  }
  done.seconds = std::chrono::duration<double>(now - start).count();
  if (!failure.reason.empty()) detail::SetFailure(&run.result(), failure.reason, failure.message);
  return done;
}

// Connects the echo stream the peer's setup reply names and ping-pongs over it; the stream is
// closed on return, before probe_done.
RoundTrips OverEchoStream(const detail::PeerProbeSession& session, std::uint64_t size,
                          std::uint64_t allowed, detail::InitiatorRun& run) {
  const std::optional<std::uint16_t> port = session.DataPort();
  if (!port) {
    detail::SetFailure(&run.result(), "protocol", "the peer's setup reply has no tcp_port");
    return {};
  }
  peer::NetError error;
  const std::optional<base::UniqueFd> socket = detail::ConnectStream(
      session.DataHost(), *port, run.params().rails.front(), run.deadline().Remaining(), &error);
  if (!socket) {
    detail::SetFailure(&run.result(), error.reason, "echo stream: " + error.message);
    return {};
  }
  return PingPong(socket->get(), size, allowed, run);
}

void MeasureRoundTrips(detail::InitiatorRun& run) {
  const ProbeParams& params = run.params();
  ProbeResult& result = run.result();
  const std::uint64_t size =
      params.message_sizes_bytes.empty() ? std::uint64_t{8} : params.message_sizes_bytes[0];
  const std::uint64_t allowed =
      std::min<std::uint64_t>(kTcpRttMaxRoundTrips + kTcpRttWarmupRoundTrips, kRttMaxBytes / size);
  result.message_size_bytes = size;
  detail::PeerProbeSession session;
  if (!run.OpenSession(run.Setup({params.rails.front()}, size, size * allowed), &session)) {
    run.EndBeforeTransfer();
    return;
  }
  const RoundTrips done = OverEchoStream(session, size, allowed, run);
  const std::optional<json> report = run.FinishSession(
      &session, json{{"round_trips", done.count}, {"bytes_sent", done.count * size}});
  result.peer_cpu_seconds = detail::PeerCpuSeconds(report);
  result.bytes = done.count * size;
  result.bytes_sent = result.bytes;
  result.seconds = done.seconds;
  result.rtt = SummariseInPlace(result.rtt_samples_seconds);
  if (result.error_reason.empty() && !result.rtt) {
    detail::SetFailure(&result, "stream", "no round trip completed");
  }
}

}  // namespace

ProbeResult TcpRttProbe::Run(const ProbeParams& params, const ProbeContext& context) {
  return detail::RunInitiator({ProbeKind::kTcpRtt, Validate(params)}, params, context,
                              MeasureRoundTrips);
}

}  // namespace rail::probe
