// Sockets of the peer control channel and of the TCP probes: an owning fd, host:port parsing,
// connecting with a timeout (optionally bound to a local address and a netdev), and a framed JSON
// connection (framing.h) whose every wait ends at a deadline.
//
// Errors are reported as a stable reason token plus a message for people, so that they can be
// counted and exported (rail_probe errors by reason) without parsing text:
//   resolve      the host name did not resolve
//   refused      nothing listens there (ECONNREFUSED)
//   unreachable  no route (ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL)
//   timeout      the deadline passed
//   bind         the local address or device could not be bound
//   closed       the peer closed the connection (or reset it)
//   oversized    the peer announced a frame larger than the limit (the stream is unusable after it)
//   malformed    the frame is not JSON or lacks the envelope ("v", "type")
//   version      the frame speaks another protocol version
//   cancelled    the cancel fd became readable (the owner is shutting down)
//   io           any other socket error
// and, from a peer's error reply, the reason it gave (session_messages.h, KnownReason), e.g. busy
// with its retry hint in NetError::retry_after.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "rail/base/clock.h"
#include "rail/base/unique_fd.h"
#include "rail/peer/framing.h"

namespace rail::peer {

// Every wait of the channel ends at a deadline on an injected clock (base::Deadline).
using Deadline = base::Deadline;

// The responder's default port (the exporter's endpoint is 9840).
inline constexpr std::uint16_t kDefaultResponderPort = 9841;

struct NetError {
  std::string reason;   // one of the tokens above
  std::string message;  // for people
  // A peer's `busy` error reply: when it says a retry should be admitted.
  std::optional<std::chrono::milliseconds> retry_after;
};

struct HostPort {
  std::string host;  // without brackets: "::1", "10.0.0.2", "node7"
  std::uint16_t port = 0;
};

// Accepts "host", "host:port", "[v6]", "[v6]:port" and a bare IPv6 address ("fe80::1", which has
// more than one colon and so cannot carry a port). A missing port becomes `default_port`.
std::optional<HostPort> ParseHostPort(std::string_view text, std::uint16_t default_port,
                                      std::string* error);
// The inverse: brackets around IPv6 addresses.
std::string FormatHostPort(const std::string& host, std::uint16_t port);

struct ConnectOptions {
  std::string local_address;  // numeric IP to bind before connecting; empty: the kernel picks
  // Netdev to bind with SO_BINDTODEVICE. That needs CAP_NET_RAW; without it the option is skipped
  // (the local address then selects the route) and `device_bound` below says so.
  std::string bind_device;
};

struct ConnectedSocket {
  base::UniqueFd fd;  // non-blocking, close-on-exec, connected
  bool device_bound = false;
};

// Resolves `host` and tries its addresses in turn until one connects or `timeout` has passed.
// With a local address only addresses of the same family are tried.
std::optional<ConnectedSocket> ConnectTcp(const std::string& host, std::uint16_t port,
                                          Deadline deadline, const ConnectOptions& options,
                                          NetError* error);

// The numeric address of the socket's peer, or of the socket itself; IPv4-mapped IPv6 addresses
// come out as plain IPv4 so that one peer is one key whichever way it connected. "" on failure.
std::string PeerAddress(int fd);
std::string LocalAddress(int fd);

bool SetBlocking(int fd, bool blocking);

// Waits until `fd` is ready for `events` (POLLIN/POLLOUT), the deadline passes or `cancel_fd`
// (if >= 0) becomes readable. Returns true when ready; otherwise sets `error`.
bool WaitReady(int fd, short events, Deadline deadline, int cancel_fd, NetError* error);

// A framed JSON connection. Not thread-safe: one session uses it from one thread.
class Connection {
 public:
  Connection(base::UniqueFd fd, std::size_t max_frame_bytes = kDefaultMaxFrameBytes);

  // Connects (ConnectTcp) and wraps the socket.
  static std::optional<Connection> Connect(const std::string& host, std::uint16_t port,
                                           Deadline deadline, const ConnectOptions& options,
                                           std::size_t max_frame_bytes, NetError* error);

  // Any wait of Send/Receive also ends, with reason "cancelled", once `fd` is readable (an
  // eventfd or pipe that the owner signals on shutdown). -1: none.
  void set_cancel_fd(int fd) { cancel_fd_ = fd; }

  // Writes one frame; a message that cannot be encoded fails with reason "oversized" (too large)
  // or "malformed".
  bool Send(const nlohmann::json& message, Deadline deadline, NetError* error);
  // Writes raw bytes, e.g. a test's garbage or a deliberately truncated frame.
  bool SendRaw(std::string_view bytes, Deadline deadline, NetError* error);

  // Reads the next message. On "version" the message is still returned through `wrong_version`
  // when given, so that its type can be reported.
  std::optional<nlohmann::json> Receive(Deadline deadline, NetError* error,
                                        nlohmann::json* wrong_version = nullptr);

  int fd() const { return fd_.get(); }
  std::string peer_address() const { return PeerAddress(fd_.get()); }
  void Close() { fd_.reset(); }

 private:
  base::UniqueFd fd_;
  FrameDecoder decoder_;
  std::string pending_;  // received, not yet given to the decoder (at most one recv's worth)
  int cancel_fd_ = -1;
};

}  // namespace rail::peer
