// The TCP probe kinds and their responder halves.
//
// tcp_throughput (like `iperf3 -P N`): the initiator connects `params.streams` streams from the
// rail's local IPv4 (and SO_BINDTODEVICE to its netdev, which may be a bond, when permitted) to
// the sink the responder opened on its rail, then ONE thread (like iperf3 3.12) sends on every
// stream: the data sockets are non-blocking, poll() reports the writable ones and each takes
// buffers of message_sizes_bytes[0] until its send buffer is full, until params.duration has
// passed or the probe's byte budget (kTcpThroughputMaxBytes, split evenly among the streams) is
// spent. The responder's sink likewise accepts and receives every stream from the one thread
// that runs Serve, with poll(), counting bytes and first/last byte times per stream. The reported
// throughput is the RECEIVER's byte count divided by the receiver's active time (first to last byte
// received), both from the peer's probe_report, as iperf3's receiver line; the sender's count is
// kept in bytes_sent.
//
// tcp_rtt (like `sockperf ping-pong`): one stream with TCP_NODELAY; the initiator sends a
// message of message_sizes_bytes[0] (default 8 B) and waits for its echo; every sample is a full
// round trip, summarised with Summarise(). The first kTcpRttWarmupRoundTrips are not recorded,
// unless they take more than a tenth of the duration (a slow rail needs every sample it gets).
//
// Both: the counters of every rail in params.rails and context.all_rails are read before and
// after; result.counters lists the probed rails first (share = of the probed rails' transmitted
// bytes), then every other readable rail (share 0), e.g. the slaves of a probed bond;
// bytes_on_other_rails sums the latter's transmitted bytes. local_cpu_seconds is the CPU time of
// the probe's thread (CLOCK_THREAD_CPUTIME_ID; one thread however many streams),
// peer_cpu_seconds the responder's own count (likewise its one serving thread).
// params.timeout ends the probe whatever happens; every failure sets error_reason (connect and
// control-channel tokens of rail/peer/connection.h and client.h, plus "invalid_argument",
// "cancelled", "stream") and error_message.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "rail/peer/connection.h"
#include "rail/peer/responder.h"
#include "rail/probe/probe.h"

namespace rail::probe {

// A throughput probe ends after its duration or after this many bytes, whichever comes first:
// the responder's default limit on bytes per probe (limits.h), ~5.5 s at 100 Gbit/s.
inline constexpr std::uint64_t kTcpThroughputMaxBytes = std::uint64_t{64} << 30;
inline constexpr std::uint64_t kTcpMaxSendBufferBytes = std::uint64_t{16} << 20;
inline constexpr unsigned kTcpRttWarmupRoundTrips = 16;
inline constexpr std::uint64_t kTcpRttMaxRoundTrips = 1'000'000;
inline constexpr std::uint64_t kTcpRttMaxMessageBytes = std::uint64_t{1} << 20;

// The time a tcp_throughput run's bytes are divided by: the receiver's window from its first to
// its last byte, or the sender's time spent sending when that is longer. A rail that stalled
// mid-run (its link set down) delivers nothing after its last byte: over the receiver's window
// alone, a run that moved 40 MB in 6 s would report the rate of its first 0.1 s.
double TcpThroughputSeconds(double receiver_seconds, double sending_seconds);

class TcpThroughputProbe final : public Probe {
 public:
  ProbeKind kind() const override { return ProbeKind::kTcpThroughput; }
  ProbeResult Run(const ProbeParams& params, const ProbeContext& context) override;
};

class TcpRttProbe final : public Probe {
 public:
  ProbeKind kind() const override { return ProbeKind::kTcpRtt; }
  ProbeResult Run(const ProbeParams& params, const ProbeContext& context) override;
};

// Responder half of tcp_throughput: listens on the rail's IPv4 (every address when the rail has
// none) on an ephemeral port, accepts the requested number of streams and counts what arrives.
// Setup reply: {tcp_port, tcp_address (when the rail has one), streams}. Report:
// {bytes_received, seconds, cpu_seconds, streams_accepted, stream_bytes: [...]}.
class TcpSinkHandler final : public peer::ProbeSessionHandler {
 public:
  explicit TcpSinkHandler(ProbeRail rail) : rail_(std::move(rail)) {}
  bool Setup(const peer::ProbeSetup& request, nlohmann::json* reply_fields, std::string* reason,
             std::string* message) override;
  void Serve(const std::atomic<bool>& stop) override;
  nlohmann::json Report() override;

 private:
  struct Stream {
    std::uint64_t bytes = 0;
    std::chrono::steady_clock::time_point first_byte;
    std::chrono::steady_clock::time_point last_byte;
  };
  bool ReceiveReady(base::UniqueFd* socket, Stream* stream, std::span<char> buffer);
  // Received bytes are dropped in the kernel (MSG_TRUNC) rather than copied out, when the one
  // sink thread receives several streams. The copy is the probe's work, not the path's: on the
  // 2-core lab, where sender and sink share the CPUs, the copying sink saturated its core in 2-5
  // rounds of 12 (15-40 Gbit/s, the sender rwnd-limited) and without it in none of 37, with 25%
  // less CPU. A single stream keeps the copy, as iperf3 does: there the sender is the lab's
  // bottleneck, and without the copy the stream lost 12% (the sender's core then seems to take
  // on more of the kernel's receive work, the sink holding its socket for less time).
  bool DiscardsReceivedBytes() const { return streams_wanted_ > 1; }

  ProbeRail rail_;
  base::UniqueFd listener_;
  unsigned streams_wanted_ = 1;
  std::uint64_t max_bytes_ = 0;
  std::uint64_t total_bytes_ = 0;
  std::vector<Stream> streams_;  // sized in Serve before any stream is accepted
  unsigned streams_accepted_ = 0;
  double serve_cpu_seconds_ = 0;
};

// Responder half of tcp_rtt: accepts one stream and writes back every byte it reads, with
// TCP_NODELAY. Setup reply: {tcp_port, tcp_address}. Report: {bytes_echoed, cpu_seconds}.
class TcpEchoHandler final : public peer::ProbeSessionHandler {
 public:
  explicit TcpEchoHandler(ProbeRail rail) : rail_(std::move(rail)) {}
  bool Setup(const peer::ProbeSetup& request, nlohmann::json* reply_fields, std::string* reason,
             std::string* message) override;
  void Serve(const std::atomic<bool>& stop) override;
  nlohmann::json Report() override;

 private:
  ProbeRail rail_;
  base::UniqueFd listener_;
  std::uint64_t max_bytes_ = 0;
  std::uint64_t bytes_echoed_ = 0;
  double cpu_seconds_ = 0;
};

}  // namespace rail::probe
