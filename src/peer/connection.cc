#include "rail/peer/connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>

#include "shared_helpers.h"

namespace rail::peer {

namespace {

using nlohmann::json;

using detail::Fail;

using detail::ErrnoText;

std::string ConnectReason(int error_number) {
  switch (error_number) {
    case ECONNREFUSED:
    // Reset while it was being set up: the listener closed with the connection still in its
    // backlog (a responder stopping), which is nobody listening, as a refusal is.
    case ECONNRESET:
      return "refused";
    case ETIMEDOUT:
      return "timeout";
    case ENETUNREACH:
    case EHOSTUNREACH:
    case ENETDOWN:
    case EHOSTDOWN:
    case EADDRNOTAVAIL:
      return "unreachable";
    default:
      return "io";
  }
}

std::string NumericAddress(const sockaddr_storage& address, socklen_t length) {
  if (address.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) {
      char text[INET_ADDRSTRLEN] = {};
      if (inet_ntop(AF_INET, &v6.sin6_addr.s6_addr[12], text, sizeof(text)) == nullptr) return "";
      return text;
    }
  }
  char host[NI_MAXHOST] = {};
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof(host), nullptr,
                  0, NI_NUMERICHOST) != 0) {
    return "";
  }
  return host;
}

int FamilyOf(const std::string& numeric_address) {
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, numeric_address.c_str(), &v4) == 1) return AF_INET;
  if (inet_pton(AF_INET6, numeric_address.c_str(), &v6) == 1) return AF_INET6;
  return AF_UNSPEC;
}

// Binds the unconnected socket to the requested device and local address.
bool BindLocal(int fd, int family, const ConnectOptions& options, bool* device_bound,
               NetError* error) {
  *device_bound = false;
  if (!options.bind_device.empty()) {
    if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, options.bind_device.c_str(),
                   static_cast<socklen_t>(options.bind_device.size())) == 0) {
      *device_bound = true;
    } else if (errno != EPERM && errno != EACCES) {
      // Without CAP_NET_RAW the local address alone steers the route; a missing device is real.
      return Fail(error, "bind",
                  "cannot bind to device " + options.bind_device + ": " + ErrnoText(errno));
    }
  }
  if (options.local_address.empty()) return true;
  sockaddr_storage local{};
  socklen_t length = 0;
  if (family == AF_INET) {
    auto& v4 = reinterpret_cast<sockaddr_in&>(local);
    v4.sin_family = AF_INET;
    inet_pton(AF_INET, options.local_address.c_str(), &v4.sin_addr);
    length = sizeof(sockaddr_in);
  } else {
    auto& v6 = reinterpret_cast<sockaddr_in6&>(local);
    v6.sin6_family = AF_INET6;
    inet_pton(AF_INET6, options.local_address.c_str(), &v6.sin6_addr);
    length = sizeof(sockaddr_in6);
  }
  if (bind(fd, reinterpret_cast<const sockaddr*>(&local), length) != 0) {
    return Fail(error, "bind",
                "cannot bind to local address " + options.local_address + ": " + ErrnoText(errno));
  }
  return true;
}

std::optional<ConnectedSocket> ConnectOne(const addrinfo& candidate, const ConnectOptions& options,
                                          Deadline deadline, const std::string& target,
                                          NetError* error) {
  base::UniqueFd fd(socket(candidate.ai_family,
                           candidate.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                           candidate.ai_protocol));
  if (!fd) {
    Fail(error, "io", "socket: " + ErrnoText(errno));
    return std::nullopt;
  }
  ConnectedSocket connected;
  if (!BindLocal(fd.get(), candidate.ai_family, options, &connected.device_bound, error)) {
    return std::nullopt;
  }
  if (connect(fd.get(), candidate.ai_addr, candidate.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      Fail(error, ConnectReason(errno), "connect to " + target + ": " + ErrnoText(errno));
      return std::nullopt;
    }
    if (!WaitReady(fd.get(), POLLOUT, deadline, -1, error)) {
      if (error->reason == "timeout") error->message = "connect to " + target + " timed out";
      return std::nullopt;
    }
    int socket_error = 0;
    socklen_t length = sizeof(socket_error);
    if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &socket_error, &length) != 0) {
      socket_error = errno;
    }
    if (socket_error != 0) {
      Fail(error, ConnectReason(socket_error),
           "connect to " + target + ": " + ErrnoText(socket_error));
      return std::nullopt;
    }
  }
  connected.fd = std::move(fd);
  return connected;
}

}  // namespace

std::optional<HostPort> ParseHostPort(std::string_view text, std::uint16_t default_port,
                                      std::string* error) {
  HostPort result{std::string(), default_port};
  std::string_view port_text;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) {
      *error = "missing ']' in \"" + std::string(text) + "\"";
      return std::nullopt;
    }
    result.host = std::string(text.substr(1, close - 1));
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        *error = "unexpected text after ']' in \"" + std::string(text) + "\"";
        return std::nullopt;
      }
      port_text = rest.substr(1);
      has_port = true;
    }
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    const std::size_t colon = text.find(':');
    result.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
    has_port = true;
  } else {
    result.host = std::string(text);  // a name, an IPv4 address or a bare IPv6 address
  }
  if (result.host.empty()) {
    *error = "missing host in \"" + std::string(text) + "\"";
    return std::nullopt;
  }
  if (has_port) {
    unsigned port = 0;
    const auto [end, status] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (status != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
        port > 65535) {
      *error = "invalid port \"" + std::string(port_text) + "\" in \"" + std::string(text) + "\"";
      return std::nullopt;
    }
    result.port = static_cast<std::uint16_t>(port);
  }
  return result;
}

std::string FormatHostPort(const std::string& host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::optional<ConnectedSocket> ConnectTcp(const std::string& host, std::uint16_t port,
                                          Deadline deadline, const ConnectOptions& options,
                                          NetError* error) {
  const std::string target = FormatHostPort(host, port);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_family = AF_UNSPEC;
  if (!options.local_address.empty()) {
    hints.ai_family = FamilyOf(options.local_address);
    if (hints.ai_family == AF_UNSPEC) {
      Fail(error, "bind", "local address \"" + options.local_address + "\" is not a numeric IP");
      return std::nullopt;
    }
  }
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  // getaddrinfo has no timeout; numeric hosts (the usual case) never touch a resolver.
  const int status = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (status != 0) {
    Fail(error, "resolve", "cannot resolve " + host + ": " + gai_strerror(status));
    return std::nullopt;
  }
  const std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, &freeaddrinfo);
  Fail(error, "resolve", "no address found for " + host);
  for (const addrinfo* candidate = found; candidate != nullptr; candidate = candidate->ai_next) {
    if (deadline.Passed()) {
      Fail(error, "timeout", "connect to " + target + " timed out");
      break;
    }
    std::optional<ConnectedSocket> connected =
        ConnectOne(*candidate, options, deadline, target, error);
    if (connected) return connected;
  }
  return std::nullopt;
}

std::string PeerAddress(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
  return NumericAddress(address, length);
}

std::string LocalAddress(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
  return NumericAddress(address, length);
}

bool SetBlocking(int fd, bool blocking) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return false;
  const int wanted = blocking ? (flags & ~O_NONBLOCK) : (flags | O_NONBLOCK);
  return fcntl(fd, F_SETFL, wanted) == 0;
}

bool WaitReady(int fd, short events, Deadline deadline, int cancel_fd, NetError* error) {
  pollfd fds[2] = {{fd, events, 0}, {cancel_fd, POLLIN, 0}};
  const nfds_t count = cancel_fd >= 0 ? 2 : 1;
  while (true) {
    if (deadline.Passed()) return Fail(error, "timeout", "deadline passed");
    const int ready = poll(fds, count, deadline.PollMilliseconds());
    if (ready < 0) {
      if (errno == EINTR) continue;
      return Fail(error, "io", "poll: " + ErrnoText(errno));
    }
    if (count == 2 && fds[1].revents != 0) return Fail(error, "cancelled", "shutting down");
    // Errors and hang-ups count as ready: the following recv/send/SO_ERROR reports them.
    if (fds[0].revents != 0) return true;
  }
}

Connection::Connection(base::UniqueFd fd, std::size_t max_frame_bytes)
    : fd_(std::move(fd)), decoder_(max_frame_bytes) {}

std::optional<Connection> Connection::Connect(const std::string& host, std::uint16_t port,
                                              Deadline deadline, const ConnectOptions& options,
                                              std::size_t max_frame_bytes, NetError* error) {
  std::optional<ConnectedSocket> connected = ConnectTcp(host, port, deadline, options, error);
  if (!connected) return std::nullopt;
  return Connection(std::move(connected->fd), max_frame_bytes);
}

bool Connection::Send(const json& message, Deadline deadline, NetError* error) {
  std::string encode_error;
  std::optional<std::string> frame =
      EncodeFrame(message, decoder_.max_frame_bytes(), &encode_error);
  if (!frame) {
    const bool too_large = encode_error.find("exceeds") != std::string::npos;
    return Fail(error, too_large ? "oversized" : "malformed", encode_error);
  }
  return SendRaw(*frame, deadline, error);
}

bool Connection::SendRaw(std::string_view bytes, Deadline deadline, NetError* error) {
  if (!fd_) return Fail(error, "closed", "connection already closed");
  while (!bytes.empty()) {
    const ssize_t sent = send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent >= 0) {
      bytes.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!WaitReady(fd_.get(), POLLOUT, deadline, cancel_fd_, error)) return false;
      continue;
    }
    if (errno == EPIPE || errno == ECONNRESET) {
      return Fail(error, "closed", "peer closed the connection: " + ErrnoText(errno));
    }
    return Fail(error, "io", "send: " + ErrnoText(errno));
  }
  return true;
}

std::optional<json> Connection::Receive(Deadline deadline, NetError* error, json* wrong_version) {
  if (!fd_) {
    Fail(error, "closed", "connection already closed");
    return std::nullopt;
  }
  while (true) {
    if (!pending_.empty()) {
      std::string_view input(pending_);
      DecodeResult result = decoder_.Decode(&input);
      pending_.erase(0, pending_.size() - input.size());
      switch (result.status) {
        case DecodeStatus::kNeedMore:
          break;
        case DecodeStatus::kFrame:
          return std::move(result.message);
        case DecodeStatus::kOversized:
          Fail(error, "oversized", result.error);
          return std::nullopt;
        case DecodeStatus::kMalformedJson:
        case DecodeStatus::kBadEnvelope:
          Fail(error, "malformed", result.error);
          return std::nullopt;
        case DecodeStatus::kWrongVersion:
          if (wrong_version != nullptr) *wrong_version = std::move(result.message);
          Fail(error, "version", result.error);
          return std::nullopt;
      }
    }
    if (decoder_.failed()) {
      Fail(error, "oversized", "stream lost its framing after an oversized frame");
      return std::nullopt;
    }
    if (!WaitReady(fd_.get(), POLLIN, deadline, cancel_fd_, error)) return std::nullopt;
    // One read's worth at a time keeps memory bounded whatever the peer sends.
    char buffer[16 * 1024];
    const ssize_t received = recv(fd_.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
    if (received > 0) {
      pending_.append(buffer, static_cast<std::size_t>(received));
    } else if (received == 0) {
      Fail(error, "closed",
           decoder_.buffered_bytes() > 0 ? "peer closed the connection in the middle of a frame"
                                         : "peer closed the connection");
      return std::nullopt;
    } else if (errno == ECONNRESET) {
      Fail(error, "closed", "peer reset the connection");
      return std::nullopt;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      Fail(error, "io", "recv: " + ErrnoText(errno));
      return std::nullopt;
    }
  }
}

}  // namespace rail::peer
