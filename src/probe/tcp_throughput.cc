#include <poll.h>
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

struct SenderStream {
  base::UniqueFd socket;     // non-blocking
  std::uint64_t budget = 0;  // this stream's share of the probe's byte budget
  std::uint64_t bytes = 0;   // accepted by send()
  bool done = false;
  Clock::time_point finished;
  std::string error_reason;
  std::string error_message;
};

// Ends a stream: its write side is shut so the receiver sees the end of the stream.
void Finish(SenderStream* stream, std::string reason = {}, std::string message = {}) {
  shutdown(stream->socket.get(), SHUT_WR);
  stream->done = true;
  stream->finished = Clock::now();
  stream->error_reason = std::move(reason);
  stream->error_message = std::move(message);
}

// Rounds of one send per writable stream after each poll(), as iperf3's multisend: a stream
// whose receiver keeps up is never full, so it must not keep the thread to itself.
constexpr int kSendRounds = 8;

enum class SendOutcome { kMore, kFull, kEnded, kTimeUp };

// One send of `buffer` (or what is left of the stream's budget) on a writable stream.
SendOutcome SendOnce(SenderStream* stream, const detail::PageAlignedBuffer& buffer,
                     Clock::time_point end) {
  if (stream->bytes >= stream->budget) {
    Finish(stream);
    return SendOutcome::kEnded;
  }
  if (Clock::now() >= end) return SendOutcome::kTimeUp;
  const std::size_t chunk = static_cast<std::size_t>(
      std::min<std::uint64_t>(buffer.size(), stream->budget - stream->bytes));
  const ssize_t sent = send(stream->socket.get(), buffer.data(), chunk, MSG_NOSIGNAL);
  if (sent > 0) {
    stream->bytes += static_cast<std::uint64_t>(sent);
    if (stream->bytes >= stream->budget) {
      Finish(stream);
      return SendOutcome::kEnded;
    }
    return static_cast<std::size_t>(sent) < chunk ? SendOutcome::kFull : SendOutcome::kMore;
  }
  if (sent < 0 && detail::IsRetryable(errno)) return SendOutcome::kFull;
  Finish(stream, "stream", std::string("send failed: ") + std::strerror(errno));
  return SendOutcome::kEnded;
}

std::uint64_t BytesSent(const std::vector<SenderStream>& streams) {
  std::uint64_t bytes = 0;
  for (const SenderStream& stream : streams) bytes += stream.bytes;
  return bytes;
}

// Sends on every stream from this one thread (like iperf3 3.12): poll() for writable streams
// and send to those in rounds, until `end`, every budget, the deadline or cancellation; the wait is
// at most kTcpSlice, so that cancellation is noticed while every send buffer is full. `intervals`
// sees what send() accepted so far at every pass: the receiver's pace once the buffers are full.
void SendAll(std::vector<SenderStream>* streams, const detail::PageAlignedBuffer& buffer,
             Clock::time_point end, const detail::ProbeDeadline& deadline,
             IntervalRecorder& intervals) {
  std::vector<pollfd> ready;
  std::vector<SenderStream*> polled;
  while (true) {
    const Clock::time_point now = Clock::now();
    intervals.Observe(now, BytesSent(*streams));
    const char* reason = nullptr;
    const char* message = nullptr;
    if (now >= end) {
      reason = "";
    } else if (deadline.Expired()) {
      reason = "timeout";
      message = "probe timeout passed while sending";
    } else if (deadline.Cancelled()) {
      reason = "cancelled";
      message = "probe cancelled";
    }
    ready.clear();
    polled.clear();
    for (SenderStream& stream : *streams) {
      if (stream.done) continue;
      if (reason != nullptr) {
        Finish(&stream, reason, message == nullptr ? "" : message);
        continue;
      }
      ready.push_back(pollfd{stream.socket.get(), POLLOUT, 0});
      polled.push_back(&stream);
    }
    if (polled.empty()) return;
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(
        std::min<Clock::duration>(end - now, detail::kTcpSlice));
    const int events = poll(ready.data(), ready.size(), static_cast<int>(wait.count()));
    if (events < 0 && errno != EINTR) {
      const std::string error = std::string("poll failed: ") + std::strerror(errno);
      for (SenderStream* stream : polled) Finish(stream, "stream", error);
      return;
    }
    if (events <= 0) continue;
    std::size_t writable = 0;  // the streams poll() reported, moved to the front of `polled`
    for (std::size_t i = 0; i < ready.size(); ++i) {
      if (ready[i].revents != 0) polled[writable++] = polled[i];
    }
    for (int round = 0; round < kSendRounds && writable > 0; ++round) {
      std::size_t kept = 0;
      for (std::size_t i = 0; i < writable; ++i) {
        const SendOutcome outcome = SendOnce(polled[i], buffer, end);
        if (outcome == SendOutcome::kTimeUp) break;  // the loop's top ends every stream
        if (outcome == SendOutcome::kMore) polled[kept++] = polled[i];
      }
      writable = Clock::now() >= end ? 0 : kept;
    }
  }
}

std::optional<std::string> Validate(const ProbeParams& params) {
  if (params.rails.empty()) return "tcp_throughput needs a rail";
  if (params.streams < 1 || params.streams > peer::kMaxProbeStreams) {
    return "streams must be between 1 and " + std::to_string(peer::kMaxProbeStreams);
  }
  if (params.duration.count() <= 0) return "duration must be positive";
  if (!params.message_sizes_bytes.empty() && params.message_sizes_bytes[0] == 0) {
    return "message size must be positive";
  }
  return std::nullopt;
}

// Connects every stream before any sends, as iperf3 does, so that they share the window; false
// (the result says why) as soon as one cannot.
bool ConnectStreams(const detail::PeerProbeSession& session, detail::InitiatorRun& run,
                    std::vector<SenderStream>* streams) {
  const std::optional<std::uint16_t> port = session.DataPort();
  if (!port) {
    detail::SetFailure(&run.result(), "protocol", "the peer's setup reply has no tcp_port");
    return false;
  }
  for (SenderStream& stream : *streams) {
    peer::NetError error;
    std::optional<base::UniqueFd> socket = detail::ConnectStream(
        session.DataHost(), *port, run.params().rails.front(), run.deadline().Remaining(), &error);
    if (!socket) {
      detail::SetFailure(&run.result(), error.reason, "data stream: " + error.message);
      return false;
    }
    stream.socket = std::move(*socket);
    if (!peer::SetBlocking(stream.socket.get(), false)) {
      detail::SetFailure(&run.result(), "io",
                         std::string("data stream: cannot configure: ") + std::strerror(errno));
      return false;
    }
    stream.budget = kTcpThroughputMaxBytes / streams->size();
  }
  return true;
}

// Sends buffers of `buffer_bytes` on every stream for the run's duration; the result gets the
// bytes send() accepted and the first stream failure. Returns the time spent sending.
double SendForDuration(std::vector<SenderStream>& streams, std::uint64_t buffer_bytes,
                       detail::InitiatorRun& run) {
  const detail::PageAlignedBuffer buffer(buffer_bytes, 'r');
  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      std::min(start + run.params().duration, run.deadline().deadline().at());
  IntervalRecorder intervals(start, end - start, buffer_bytes);
  SendAll(&streams, buffer, end, run.deadline(), intervals);
  run.result().spread = SpreadOf(intervals.Rates());
  Clock::time_point finished = start;
  for (const SenderStream& stream : streams) {
    finished = std::max(finished, stream.finished);
    run.result().bytes_sent += stream.bytes;
    if (!stream.error_reason.empty()) {
      detail::SetFailure(&run.result(), stream.error_reason, stream.error_message);
    }
  }
  return std::chrono::duration<double>(finished - start).count();
}

// The receiver's count over the receiver's window (or the sender's time, TcpThroughputSeconds),
// from the peer's report.
void AddReceiverCount(const json& report, double sending_seconds, ProbeResult* result) {
  result->bytes = detail::ReportCount(report, "bytes_received").value_or(0);
  result->seconds =
      TcpThroughputSeconds(detail::ReportNumber(report, "seconds").value_or(0), sending_seconds);
  if (result->seconds > 0) {
    result->throughput_bytes_per_second = static_cast<double>(result->bytes) / result->seconds;
  }
  if (result->error_reason.empty() && result->bytes == 0) {
    detail::SetFailure(result, "stream", "no bytes arrived at the peer");
  }
}

void MeasureThroughput(detail::InitiatorRun& run) {
  const ProbeParams& params = run.params();
  ProbeResult& result = run.result();
  const std::uint64_t buffer_bytes =
      std::min(params.message_sizes_bytes.empty() ? std::uint64_t{128 * 1024}
                                                  : params.message_sizes_bytes[0],
               kTcpMaxSendBufferBytes);
  result.message_size_bytes = buffer_bytes;
  result.streams = params.streams;
  peer::ProbeSetup setup = run.Setup({params.rails.front()}, buffer_bytes, kTcpThroughputMaxBytes);
  setup.streams = params.streams;
  detail::PeerProbeSession session;
  if (!run.OpenSession(setup, &session)) {
    run.EndBeforeTransfer();
    return;
  }
  std::vector<SenderStream> streams(params.streams);  // closed on return, after probe_done
  double sending_seconds = 0;
  if (ConnectStreams(session, run, &streams)) {
    sending_seconds = SendForDuration(streams, buffer_bytes, run);
  }
  // probe_done is sent even after a failure, so that the peer stops waiting for streams.
  const std::optional<json> report =
      run.FinishSession(&session, json{{"bytes_sent", result.bytes_sent},
                                       {"seconds", sending_seconds},
                                       {"streams", params.streams}});
  if (!report) return;
  result.peer_cpu_seconds = detail::ReportNumber(*report, "cpu_seconds");
  AddReceiverCount(*report, sending_seconds, &result);
}

}  // namespace

double TcpThroughputSeconds(double receiver_seconds, double sending_seconds) {
  return std::max(receiver_seconds, sending_seconds);
}

ProbeResult TcpThroughputProbe::Run(const ProbeParams& params, const ProbeContext& context) {
  return detail::RunInitiator({ProbeKind::kTcpThroughput, Validate(params)}, params, context,
                              MeasureThroughput);
}

}  // namespace rail::probe
