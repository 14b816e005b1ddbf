// The agent <-> probe worker pipe: a Unix stream socket carrying the control channel's frames
// (peer/framing.h), one JSON message each, with a larger frame limit (an RTT result carries
// every sample).
#pragma once

#include <cstddef>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "rail/base/clock.h"
#include "rail/peer/connection.h"
#include "rail/peer/framing.h"

namespace rail::probe::worker {

// 1,000,000 RTT samples take ~20 MB as JSON.
inline constexpr std::size_t kMaxWorkerFrameBytes = std::size_t{64} << 20;

class Channel {
 public:
  explicit Channel(base::UniqueFd fd);

  // Thread-safe. false when the other side has gone (or the message cannot be encoded).
  bool Send(const nlohmann::json& message);
  // Blocks for the next message (until `deadline` when given); nullopt with `error` set at end of
  // stream, on a bad frame or when the deadline passed. One reader at a time.
  std::optional<nlohmann::json> Receive(std::string* error,
                                        const base::Deadline* deadline = nullptr);
  // Ends the stream both ways: a blocked Receive returns, the other side sees the end.
  void Shutdown();

 private:
  base::UniqueFd fd_;
  std::mutex send_mutex_;
  peer::FrameDecoder decoder_{kMaxWorkerFrameBytes};
  std::string pending_;  // received bytes the decoder has not consumed yet
};

}  // namespace rail::probe::worker
