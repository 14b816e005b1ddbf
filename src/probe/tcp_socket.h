// Socket mechanics shared by the TCP probes and their responder halves. tcp_rtt and its echo use
// blocking data sockets whose every send/recv returns within kTcpSlice, so that a stop flag or a
// deadline is noticed without busy-polling; tcp_throughput and its sink switch their sockets to
// non-blocking and serve every stream from one thread with poll(), waiting at most kTcpSlice.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "rail/peer/connection.h"
#include "rail/probe/result.h"

namespace rail::probe::detail {

inline constexpr std::chrono::milliseconds kTcpSlice{100};

// Blocking mode with SO_SNDTIMEO/SO_RCVTIMEO of `slice`.
bool MakeBlockingWithTimeouts(int fd, std::chrono::milliseconds slice);
bool SetNoDelay(int fd);

// Connects a data stream from `rail` (bound to its IPv4 when it has one, and to its netdev when
// permitted) to host:port, within `timeout`; the socket comes back blocking with slice timeouts.
std::optional<base::UniqueFd> ConnectStream(const std::string& host, std::uint16_t port,
                                            const ProbeRail& rail,
                                            std::chrono::milliseconds timeout,
                                            peer::NetError* error);

// Listens on `ipv4` ("" = every IPv4 address) on an ephemeral port.
base::UniqueFd ListenEphemeral(const std::string& ipv4, int backlog, std::uint16_t* port,
                               std::string* error);

// Accepts one connection on a listener, waiting in slices; an empty fd once `stop` is set. The
// accepted socket is blocking with slice timeouts.
base::UniqueFd AcceptUntilStopped(int listen_fd, const std::atomic<bool>& stop);

// A data buffer that starts on a page boundary. The kernel copies between user memory and socket
// buffers about twice as fast from there as from malloc's 16-byte alignment: perf put the sender's
// _copy_from_iter at 11.8% of its samples with a std::vector against 5.9% for iperf3 (whose buffer
// is mmapped), for the same bytes.
class PageAlignedBuffer {
 public:
  PageAlignedBuffer(std::size_t size, char fill);  // throws std::bad_alloc
  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(char* bytes) const { std::free(bytes); }
  };
  std::unique_ptr<char, Free> data_;
  std::size_t size_;
};

// True for errno values that only mean "the slice passed, try again".
bool IsRetryable(int error_number);

enum class SendEnd { kSent, kStopped, kFailed };
// Sends all of `size` bytes at `data` on a blocking socket with slice timeouts; after every slice
// that passed without progress, `keep_trying()` says whether to go on (kStopped when it says no).
// kFailed when the socket failed, errno then saying why.
template <typename KeepTrying>
SendEnd SendAll(int fd, const char* data, std::size_t size, KeepTrying&& keep_trying) {
  while (size > 0) {
    const ssize_t sent = send(fd, data, size, MSG_NOSIGNAL);
    if (sent > 0) {
      data += sent;
      size -= static_cast<std::size_t>(sent);
    } else if (sent < 0 && IsRetryable(errno)) {
      if (!keep_trying()) return SendEnd::kStopped;
    } else {
      return SendEnd::kFailed;
    }
  }
  return SendEnd::kSent;
}

}  // namespace rail::probe::detail
