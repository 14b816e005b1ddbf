#include <sys/socket.h>

#include "probe_run.h"
#include "rail/probe/tcp.h"
#include "tcp_socket.h"

namespace rail::probe {

namespace {

using nlohmann::json;

constexpr std::size_t kEchoBufferBytes = 64 * 1024;

}  // namespace

bool TcpEchoHandler::Setup(const peer::ProbeSetup& request, json* reply_fields, std::string* reason,
                           std::string* message) {
  max_bytes_ = request.max_bytes;
  std::uint16_t port = 0;
  listener_ = detail::ListenEphemeral(rail_.ipv4, 1, &port, message);
  if (!listener_) {
    *reason = "listen";
    return false;
  }
  (*reply_fields)["tcp_port"] = port;
  if (!rail_.ipv4.empty()) (*reply_fields)["tcp_address"] = rail_.ipv4;
  return true;
}

void TcpEchoHandler::Serve(const std::atomic<bool>& stop) {
  const double cpu_start = ThreadCpuSeconds();
  base::UniqueFd socket;
  if (listener_) socket = detail::AcceptUntilStopped(listener_.get(), stop);
  listener_.reset();
  if (socket) {
    detail::SetNoDelay(socket.get());
    std::vector<char> buffer(kEchoBufferBytes);
    while (!stop.load()) {
      const ssize_t received = recv(socket.get(), buffer.data(), buffer.size(), 0);
      if (received > 0) {
        const auto size = static_cast<std::size_t>(received);
        if (bytes_echoed_ + size > max_bytes_) break;  // beyond what the peer declared
        const auto keep_trying = [&stop] { return !stop.load(); };
        if (detail::SendAll(socket.get(), buffer.data(), size, keep_trying) !=
            detail::SendEnd::kSent) {
          break;
        }
        bytes_echoed_ += size;
      } else if (received == 0 || !detail::IsRetryable(errno)) {
        break;
      }
    }
  }
  cpu_seconds_ = ThreadCpuSeconds() - cpu_start;
}

json TcpEchoHandler::Report() {
  return json{{"bytes_echoed", bytes_echoed_}, {"cpu_seconds", cpu_seconds_}};
}

}  // namespace rail::probe
