#include <sys/socket.h>

#include <algorithm>

#include "probe_run.h"
#include "rail/probe/tcp.h"
#include "tcp_socket.h"

namespace rail::probe {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kReceiveBufferBytes = 256 * 1024;
// After `stop`, what is already in flight is still counted (the initiator closed its streams
// before sending probe_done, so their end is near), but for no longer than this.
constexpr std::chrono::milliseconds kDrainLimit{1000};

}  // namespace

bool TcpSinkHandler::Setup(const peer::ProbeSetup& request, json* reply_fields, std::string* reason,
                           std::string* message) {
  streams_wanted_ = std::clamp<unsigned>(request.streams, 1, peer::kMaxProbeStreams);
  max_bytes_ = request.max_bytes;
  std::uint16_t port = 0;
  listener_ =
      detail::ListenEphemeral(rail_.ipv4, static_cast<int>(streams_wanted_), &port, message);
  if (!listener_) {
    *reason = "listen";
    return false;
  }
  (*reply_fields)["tcp_port"] = port;
  if (!rail_.ipv4.empty()) (*reply_fields)["tcp_address"] = rail_.ipv4;
  (*reply_fields)["streams"] = streams_wanted_;
  return true;
}

void TcpSinkHandler::Serve(const std::atomic<bool>& stop) {
  const double cpu_start = detail::CpuSecondsOfThisThread();
  streams_.assign(streams_wanted_, Stream{});
  {
    detail::JoiningThreads receivers;
    for (unsigned i = 0; i < streams_wanted_ && listener_; ++i) {
      peer::UniqueFd socket = detail::AcceptUntilStopped(listener_.get(), stop);
      if (!socket) break;
      ++streams_accepted_;
      receivers.Start([this, i, &stop, socket = std::move(socket)]() mutable {
        Receive(std::move(socket), &streams_[i], stop);
      });
    }
    listener_.reset();  // no stream beyond those requested
  }
  serve_cpu_seconds_ = detail::CpuSecondsOfThisThread() - cpu_start;
}

void TcpSinkHandler::Receive(peer::UniqueFd socket, Stream* stream, const std::atomic<bool>& stop) {
  const double cpu_start = detail::CpuSecondsOfThisThread();
  std::vector<char> buffer(kReceiveBufferBytes);
  std::optional<Clock::time_point> stop_seen;
  while (true) {
    if (stop.load() && !stop_seen) stop_seen = Clock::now();
    if (stop_seen && Clock::now() - *stop_seen > kDrainLimit) break;
    const ssize_t received = recv(socket.get(), buffer.data(), buffer.size(), 0);
    if (received > 0) {
      const Clock::time_point now = Clock::now();
      if (stream->bytes == 0) stream->first_byte = now;
      stream->last_byte = now;
      stream->bytes += static_cast<std::uint64_t>(received);
      // Over the budget the peer declared: stop reading; closing tells the sender.
      if (total_bytes_.fetch_add(static_cast<std::uint64_t>(received)) +
              static_cast<std::uint64_t>(received) >
          max_bytes_) {
        break;
      }
      continue;
    }
    if (received == 0) break;  // the sender closed: all its bytes are counted
    if (!detail::IsRetryable(errno)) break;
    if (stop_seen) break;  // a whole slice without data after stop: nothing more in flight
  }
  stream->cpu_seconds = detail::CpuSecondsOfThisThread() - cpu_start;
}

json TcpSinkHandler::Report() {
  std::uint64_t bytes = 0;
  double cpu_seconds = serve_cpu_seconds_;
  std::optional<Clock::time_point> first;
  std::optional<Clock::time_point> last;
  json stream_bytes = json::array();
  for (const Stream& stream : streams_) {
    bytes += stream.bytes;
    cpu_seconds += stream.cpu_seconds;
    stream_bytes.push_back(stream.bytes);
    if (stream.bytes == 0) continue;
    first = first ? std::min(*first, stream.first_byte) : stream.first_byte;
    last = last ? std::max(*last, stream.last_byte) : stream.last_byte;
  }
  const double seconds = first ? std::chrono::duration<double>(*last - *first).count() : 0.0;
  return json{{"bytes_received", bytes},
              {"seconds", seconds},
              {"cpu_seconds", cpu_seconds},
              {"streams_accepted", streams_accepted_},
              {"stream_bytes", std::move(stream_bytes)}};
}

}  // namespace rail::probe
