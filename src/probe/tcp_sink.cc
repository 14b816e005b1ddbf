#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "probe_run.h"
#include "rail/probe/tcp.h"
#include "tcp_socket.h"

namespace rail::probe {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// At most one block (the default send size) per ready stream and wakeup, as iperf3's receiver:
// reading each stream dry before the next (8 reads of 256 KiB) measured 0.80-0.83 of iperf3 -P 4
// on the 2-core lab, one block 0.90-0.94 (bench/run_probes, 5 rounds each).
constexpr std::size_t kReceiveBlockBytes = 128 * 1024;
// After `stop`, what is already in flight is still counted (the initiator closed its streams
// before sending probe_done, so their end is near), but for no longer than this.
constexpr std::chrono::milliseconds kDrainLimit{1000};
// poll() waits at most this long, so that `stop` and idle streams are noticed in time.
constexpr std::chrono::milliseconds kPollSlice{20};

// Accepts a connection on a ready listener into `sockets`; true when it did. A listener that
// fails (other than by a connection gone before it was accepted) is closed.
bool AcceptStream(base::UniqueFd* listener, std::vector<base::UniqueFd>* sockets) {
  base::UniqueFd socket(accept4(listener->get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  if (!socket) {
    if (!detail::IsRetryable(errno) && errno != ECONNABORTED) listener->reset();
    return false;
  }
  sockets->push_back(std::move(socket));
  return true;
}

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
  const double cpu_start = ThreadCpuSeconds();
  streams_.assign(streams_wanted_, Stream{});
  std::vector<base::UniqueFd> sockets;  // sockets[i] receives streams_[i]; empty once ended
  // One stream's bytes are copied here; with several the kernel does not write it (MSG_TRUNC),
  // but recv() still gets a valid range, as sanitizers' recv interceptors check.
  detail::PageAlignedBuffer buffer(kReceiveBlockBytes, 0);
  std::vector<pollfd> ready;
  std::vector<std::size_t> polled;  // index into sockets of ready[i]; ~0 for the listener
  std::optional<Clock::time_point> stop_seen;
  while (true) {
    const Clock::time_point now = Clock::now();
    if (stop.load() && !stop_seen) {
      stop_seen = now;
      listener_.reset();  // no stream beyond those accepted
    }
    if (stop_seen && now - *stop_seen > kDrainLimit) break;
    ready.clear();
    polled.clear();
    if (listener_ && sockets.size() < streams_wanted_) {
      ready.push_back(pollfd{listener_.get(), POLLIN, 0});
      polled.push_back(~std::size_t{0});
    } else {
      listener_.reset();  // no stream beyond those requested
    }
    for (std::size_t i = 0; i < sockets.size(); ++i) {
      if (!sockets[i]) continue;
      // After stop, a whole slice without data means nothing more is in flight on the stream.
      const Clock::time_point idle_since =
          stop_seen ? std::max(*stop_seen, streams_[i].last_byte) : now;
      if (now - idle_since >= detail::kTcpSlice) {
        sockets[i].reset();
        continue;
      }
      ready.push_back(pollfd{sockets[i].get(), POLLIN, 0});
      polled.push_back(i);
    }
    if (ready.empty()) break;
    const int events = poll(ready.data(), ready.size(), static_cast<int>(kPollSlice.count()));
    if (events < 0 && errno != EINTR) break;
    for (std::size_t r = 0; events > 0 && r < ready.size(); ++r) {
      if (ready[r].revents == 0) continue;
      if (polled[r] != ~std::size_t{0}) {
        if (!ReceiveReady(&sockets[polled[r]], &streams_[polled[r]],
                          std::span<char>(buffer.data(), buffer.size()))) {
          sockets[polled[r]].reset();
        }
        continue;
      }
      if (AcceptStream(&listener_, &sockets)) ++streams_accepted_;
    }
  }
  sockets.clear();
  listener_.reset();
  serve_cpu_seconds_ = ThreadCpuSeconds() - cpu_start;
}

// Takes at most one block from a ready stream (so that no stream starves the others), reading
// again after a short read until the block is complete or the socket is empty, as iperf3's
// receiver does; false once the stream has ended: closed by the sender, failed, or over the
// budget. With several streams the kernel drops the bytes instead of copying them out
// (DiscardsReceivedBytes).
bool TcpSinkHandler::ReceiveReady(base::UniqueFd* socket, Stream* stream, std::span<char> buffer) {
  const int flags = DiscardsReceivedBytes() ? MSG_TRUNC : 0;
  std::size_t taken = 0;
  bool open = true;
  while (taken < buffer.size()) {
    const ssize_t received =
        recv(socket->get(), buffer.data() + taken, buffer.size() - taken, flags);
    if (received > 0) {
      taken += static_cast<std::size_t>(received);
      continue;
    }
    // 0: the sender closed, all its bytes are counted; < 0: empty for now, or failed.
    open = received < 0 && detail::IsRetryable(errno);
    break;
  }
  if (taken > 0) {
    const Clock::time_point now = Clock::now();
    if (stream->bytes == 0) stream->first_byte = now;
    stream->last_byte = now;
    stream->bytes += taken;
    total_bytes_ += taken;
  }
  // Over the budget the peer declared: stop reading; closing tells the sender.
  return open && total_bytes_ <= max_bytes_;
}

json TcpSinkHandler::Report() {
  std::uint64_t bytes = 0;
  const double cpu_seconds = serve_cpu_seconds_;
  std::optional<Clock::time_point> first;
  std::optional<Clock::time_point> last;
  json stream_bytes = json::array();
  for (const Stream& stream : streams_) {
    bytes += stream.bytes;
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
