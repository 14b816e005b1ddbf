#include "rail/peer/framing.h"

#include <algorithm>
#include <exception>
#include <limits>

namespace rail::peer {

namespace {

using nlohmann::json;

std::string TooLargeMessage(std::uint64_t bytes, std::size_t limit) {
  return "frame of " + std::to_string(bytes) + " bytes exceeds the limit of " +
         std::to_string(limit) + " bytes";
}

// Moves up to `wanted` bytes from the front of `input` to the back of `destination`.
void TakeBytes(std::string_view* input, std::size_t wanted, std::string* destination) {
  const std::size_t taken = std::min(wanted, input->size());
  destination->append(input->data(), taken);
  input->remove_prefix(taken);
}

}  // namespace

std::optional<std::string> EncodeFrame(const json& message, std::size_t max_frame_bytes,
                                       std::string* error) {
  std::string payload;
  try {
    payload = message.dump();
  } catch (const std::exception& e) {
    *error = std::string("message cannot be serialised: ") + e.what();
    return std::nullopt;
  }
  const std::size_t limit =
      std::min<std::size_t>(max_frame_bytes, std::numeric_limits<std::uint32_t>::max());
  if (payload.size() > limit) {
    *error = TooLargeMessage(payload.size(), limit);
    return std::nullopt;
  }
  const auto length = static_cast<std::uint32_t>(payload.size());
  std::string frame;
  frame.reserve(kFrameHeaderBytes + payload.size());
  frame.push_back(static_cast<char>((length >> 24) & 0xffU));
  frame.push_back(static_cast<char>((length >> 16) & 0xffU));
  frame.push_back(static_cast<char>((length >> 8) & 0xffU));
  frame.push_back(static_cast<char>(length & 0xffU));
  frame += payload;
  return frame;
}

const char* DecodeStatusName(DecodeStatus status) {
  switch (status) {
    case DecodeStatus::kFrame:
      return "frame";
    case DecodeStatus::kNeedMore:
      return "need_more";
    case DecodeStatus::kOversized:
      return "oversized";
    case DecodeStatus::kMalformedJson:
      return "malformed_json";
    case DecodeStatus::kBadEnvelope:
      return "bad_envelope";
    case DecodeStatus::kWrongVersion:
      return "wrong_version";
  }
  return "unknown";
}

FrameDecoder::FrameDecoder(std::size_t max_frame_bytes, int protocol_version)
    : max_frame_bytes_(max_frame_bytes), protocol_version_(protocol_version) {}

DecodeResult FrameDecoder::Decode(std::string_view* input) {
  if (failed()) return {DecodeStatus::kOversized, json(), fatal_error_};

  if (!payload_bytes_) {
    TakeBytes(input, kFrameHeaderBytes - buffer_.size(), &buffer_);
    if (buffer_.size() < kFrameHeaderBytes) return {DecodeStatus::kNeedMore, json(), {}};
    std::uint32_t length = 0;
    for (char byte : buffer_) length = (length << 8) | static_cast<unsigned char>(byte);
    buffer_.clear();
    if (length > max_frame_bytes_) {
      fatal_error_ = TooLargeMessage(length, max_frame_bytes_);
      return {DecodeStatus::kOversized, json(), fatal_error_};
    }
    payload_bytes_ = length;
    buffer_.reserve(length);
  }

  TakeBytes(input, *payload_bytes_ - buffer_.size(), &buffer_);
  if (buffer_.size() < *payload_bytes_) return {DecodeStatus::kNeedMore, json(), {}};
  return FinishFrame();
}

DecodeResult FrameDecoder::FinishFrame() {
  std::string payload;
  payload.swap(buffer_);
  payload_bytes_.reset();

  if (payload.empty()) return {DecodeStatus::kMalformedJson, json(), "empty frame"};

  bool too_deep = false;
  const json::parser_callback_t limit_depth = [&too_deep](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth) too_deep = true;
    return !too_deep;  // discarding stops building the oversized tree
  };
  json message;
  try {
    message = json::parse(payload, limit_depth);
  } catch (const std::exception& e) {
    return {DecodeStatus::kMalformedJson, json(), std::string("malformed JSON: ") + e.what()};
  }
  if (too_deep) {
    return {DecodeStatus::kMalformedJson, json(),
            "malformed JSON: nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
  }

  if (!message.is_object()) {
    return {DecodeStatus::kBadEnvelope, json(),
            std::string("message must be a JSON object, got ") + message.type_name()};
  }
  const auto version = message.find("v");
  if (version == message.end() || !version->is_number_integer()) {
    return {DecodeStatus::kBadEnvelope, json(),
            "message lacks an integer protocol version field \"v\""};
  }
  const auto type = message.find("type");
  if (type == message.end() || !type->is_string()) {
    return {DecodeStatus::kBadEnvelope, json(), "message lacks a string field \"type\""};
  }
  if (version->get<std::int64_t>() != protocol_version_) {
    std::string error = "protocol version " + version->dump() +
                        " not supported (this agent speaks" + " version " +
                        std::to_string(protocol_version_) + ")";
    return {DecodeStatus::kWrongVersion, std::move(message), std::move(error)};
  }
  return {DecodeStatus::kFrame, std::move(message), {}};
}

}  // namespace rail::peer
