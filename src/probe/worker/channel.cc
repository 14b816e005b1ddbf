#include "probe/worker/channel.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace rail::probe::worker {

Channel::Channel(base::UniqueFd fd) : fd_(std::move(fd)) {}

bool Channel::Send(const nlohmann::json& message) {
  nlohmann::json framed = message;
  framed["v"] = peer::kProtocolVersion;
  std::string error;
  const auto frame = peer::EncodeFrame(framed, kMaxWorkerFrameBytes, &error);
  if (!frame) return false;
  std::lock_guard lock(send_mutex_);
  std::size_t sent = 0;
  while (sent < frame->size()) {
    // MSG_NOSIGNAL: a worker that died must be a failed call, not a SIGPIPE for the agent.
    const ssize_t written =
        ::send(fd_.get(), frame->data() + sent, frame->size() - sent, MSG_NOSIGNAL);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    sent += static_cast<std::size_t>(written);
  }
  return true;
}

std::optional<nlohmann::json> Channel::Receive(std::string* error, const base::Deadline* deadline) {
  char buffer[65536];
  while (true) {
    std::string_view input(pending_);
    peer::DecodeResult result = decoder_.Decode(&input);
    pending_.erase(0, pending_.size() - input.size());
    if (result.status == peer::DecodeStatus::kFrame) return std::move(result.message);
    if (result.status != peer::DecodeStatus::kNeedMore) {
      *error = result.error;
      return std::nullopt;
    }
    if (deadline != nullptr && deadline->Passed()) {
      *error = "no message by the deadline";
      return std::nullopt;
    }
    pollfd readable{fd_.get(), POLLIN, 0};
    const int ready = ::poll(&readable, 1, deadline == nullptr ? -1 : deadline->PollMilliseconds());
    if (ready < 0 && errno != EINTR) {
      *error = std::string("poll: ") + std::strerror(errno);
      return std::nullopt;
    }
    if (ready <= 0) continue;  // EINTR, or the slice of a deadline ended: looked at again
    const ssize_t received = ::recv(fd_.get(), buffer, sizeof(buffer), 0);
    if (received < 0 && errno == EINTR) continue;
    if (received <= 0) {
      *error = received == 0 ? "end of stream" : std::strerror(errno);
      return std::nullopt;
    }
    pending_.append(buffer, static_cast<std::size_t>(received));
  }
}

void Channel::Shutdown() {
  ::shutdown(fd_.get(), SHUT_RDWR);
}

}  // namespace rail::probe::worker
