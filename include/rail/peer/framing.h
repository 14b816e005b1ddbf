// Framing of the peer control channel: every message is a 4-byte big-endian payload length followed
// by that many bytes of JSON. Every message is an object carrying "v" (the protocol version) and
// "type". Nothing here throws: a peer's bytes are untrusted input, and a bad frame must become an
// error message for that peer, never an exception that takes the responder down.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace rail::peer {

// Version 1 is the first one; a peer speaking another version gets a clear refusal.
inline constexpr int kProtocolVersion = 1;
inline constexpr std::size_t kFrameHeaderBytes = 4;
inline constexpr std::size_t kDefaultMaxFrameBytes = 64 * 1024;
// Deeper nesting is never needed by the protocol and only costs memory and time.
inline constexpr int kMaxJsonDepth = 16;

// Serialises `message` into a frame. Returns nullopt and sets `error` when the message cannot be
// serialised (e.g. invalid UTF-8 in a string) or its payload exceeds `max_frame_bytes`.
std::optional<std::string> EncodeFrame(const nlohmann::json& message, std::size_t max_frame_bytes,
                                       std::string* error);

enum class DecodeStatus {
  kFrame,          // `message` holds one complete, valid message
  kNeedMore,       // every input byte was consumed; the frame is incomplete
  kOversized,      // fatal: the announced length exceeds the limit; the stream cannot be resynced
  kMalformedJson,  // the frame is not JSON (or nests too deep); the decoder continues after it
  kBadEnvelope,    // JSON, but not an object with an integer "v" and a string "type"
  kWrongVersion,   // a well-formed message of another protocol version
};

const char* DecodeStatusName(DecodeStatus status);

struct DecodeResult {
  DecodeStatus status = DecodeStatus::kNeedMore;
  nlohmann::json message;  // set for kFrame; for kWrongVersion too, so "type" can be reported
  std::string error;       // set for every error status
};

// Incremental decoder for one connection. Feed it whatever recv() returned, in any chunking:
//
//   std::string_view input(buffer, received);
//   while (true) {
//     DecodeResult result = decoder.Decode(&input);
//     if (result.status == DecodeStatus::kNeedMore) break;
//     ... handle result; on kOversized close the connection ...
//   }
//
// Decode consumes bytes from the front of `input` only up to the end of the frame it completes,
// so several frames in one chunk come out one per call. The decoder's own buffer holds at most one
// frame, so it never grows beyond max_frame_bytes + 4 whatever the peer sends.
class FrameDecoder {
 public:
  explicit FrameDecoder(std::size_t max_frame_bytes = kDefaultMaxFrameBytes,
                        int protocol_version = kProtocolVersion);

  DecodeResult Decode(std::string_view* input);

  // Bytes held for the frame in progress (header included).
  std::size_t buffered_bytes() const { return buffer_.size(); }
  // After kOversized every further call repeats that error: the byte stream has lost its framing.
  bool failed() const { return !fatal_error_.empty(); }
  std::size_t max_frame_bytes() const { return max_frame_bytes_; }

 private:
  DecodeResult FinishFrame();

  std::size_t max_frame_bytes_;
  int protocol_version_;
  std::string buffer_;
  std::optional<std::uint32_t> payload_bytes_;  // known once the header is complete
  std::string fatal_error_;
};

}  // namespace rail::peer
