#include "tcp_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

namespace rail::probe::detail {

bool MakeBlockingWithTimeouts(int fd, std::chrono::milliseconds slice) {
  timeval timeout{};
  timeout.tv_sec = static_cast<time_t>(slice.count() / 1000);
  timeout.tv_usec = static_cast<suseconds_t>((slice.count() % 1000) * 1000);
  return peer::SetBlocking(fd, true) &&
         setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) == 0 &&
         setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) == 0;
}

bool SetNoDelay(int fd) {
  const int on = 1;
  return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) == 0;
}

PageAlignedBuffer::PageAlignedBuffer(std::size_t size, char fill) : size_(size) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  // aligned_alloc wants a size that is a multiple of the alignment.
  const std::size_t rounded = (std::max<std::size_t>(size, 1) + page - 1) / page * page;
  data_.reset(static_cast<char*>(std::aligned_alloc(page, rounded)));
  if (!data_) throw std::bad_alloc();
  std::memset(data_.get(), fill, rounded);
}

bool IsRetryable(int error_number) {
  return error_number == EAGAIN || error_number == EWOULDBLOCK || error_number == EINTR;
}

std::optional<base::UniqueFd> ConnectStream(const std::string& host, std::uint16_t port,
                                            const ProbeRail& rail,
                                            std::chrono::milliseconds timeout,
                                            peer::NetError* error) {
  peer::ConnectOptions options;
  options.local_address = rail.ipv4;
  options.bind_device = rail.netdev;
  std::optional<peer::ConnectedSocket> connected = peer::ConnectTcp(
      host, port, peer::Deadline::After(base::SystemClock(), timeout), options, error);
  if (!connected) return std::nullopt;
  if (!MakeBlockingWithTimeouts(connected->fd.get(), kTcpSlice)) {
    error->reason = "io";
    error->message = std::string("cannot configure data socket: ") + std::strerror(errno);
    return std::nullopt;
  }
  return std::move(connected->fd);
}

base::UniqueFd ListenEphemeral(const std::string& ipv4, int backlog, std::uint16_t* port,
                               std::string* error) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  if (!ipv4.empty() && inet_pton(AF_INET, ipv4.c_str(), &address.sin_addr) != 1) {
    *error = "rail address \"" + ipv4 + "\" is not an IPv4 address";
    return base::UniqueFd();
  }
  base::UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) {
    *error = std::string("socket: ") + std::strerror(errno);
    return base::UniqueFd();
  }
  if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    *error = "cannot bind " + (ipv4.empty() ? std::string("0.0.0.0") : ipv4) + ": " +
             std::strerror(errno);
    return base::UniqueFd();
  }
  if (listen(fd.get(), backlog) != 0) {
    *error = std::string("listen: ") + std::strerror(errno);
    return base::UniqueFd();
  }
  socklen_t length = sizeof(address);
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    *error = std::string("getsockname: ") + std::strerror(errno);
    return base::UniqueFd();
  }
  *port = ntohs(address.sin_port);
  return fd;
}

base::UniqueFd AcceptUntilStopped(int listen_fd, const std::atomic<bool>& stop) {
  while (!stop.load()) {
    pollfd ready{listen_fd, POLLIN, 0};
    const int events = poll(&ready, 1, static_cast<int>(kTcpSlice.count()));
    if (events < 0 && errno != EINTR) return base::UniqueFd();
    if (events <= 0) continue;
    base::UniqueFd socket(accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (!socket) {
      if (IsRetryable(errno) || errno == ECONNABORTED) continue;
      return base::UniqueFd();
    }
    if (!MakeBlockingWithTimeouts(socket.get(), kTcpSlice)) return base::UniqueFd();
    return socket;
  }
  return base::UniqueFd();
}

}  // namespace rail::probe::detail
