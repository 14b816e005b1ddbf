#include "rail/peer/messages.h"

#include <cmath>
#include <limits>

#include "rail/peer/encoding.h"
#include "rail/peer/framing.h"
#include "shared_helpers.h"

namespace rail::peer {

namespace {

using nlohmann::json;

using detail::Envelope;

// Reads the fields of one message, turning the first problem into an error that names the
// message type and the field.
class FieldReader {
 public:
  FieldReader(const json& message, const char* type, std::string* error)
      : message_(message), type_(type), error_(error) {}

  bool CheckType() {
    if (!message_.is_object()) {
      return Fail(std::string("expected a JSON object, got ") + message_.type_name());
    }
    const auto type = message_.find("type");
    if (type == message_.end() || !type->is_string()) {
      return Fail("missing string field \"type\"");
    }
    if (type->get_ref<const std::string&>() != type_) {
      return Fail("expected message type \"" + std::string(type_) + "\", got \"" +
                  type->get<std::string>() + "\"");
    }
    return true;
  }

  // A required string must be non-empty: an empty version or rail name is never meaningful.
  bool String(const char* field, std::string* out) {
    const json* value = Find(field, /*required=*/true);
    if (value == nullptr) return false;
    if (!value->is_string() || value->get_ref<const std::string&>().empty()) {
      return FieldFail(field, "expected a non-empty string, got " + Describe(*value));
    }
    *out = value->get<std::string>();
    return true;
  }

  bool HexBytes(const char* field, std::size_t bytes, std::string* out) {
    const json* value = Find(field, /*required=*/true);
    if (value == nullptr) return false;
    const std::string expected = "expected " + std::to_string(bytes * 2) + " hex digits";
    if (!value->is_string()) return FieldFail(field, expected + ", got " + Describe(*value));
    std::optional<std::string> decoded = HexDecode(value->get_ref<const std::string&>());
    if (!decoded || decoded->size() != bytes) return FieldFail(field, expected);
    *out = std::move(*decoded);
    return true;
  }

  // Absent means "not used by this probe kind" and leaves `out` empty.
  bool OptionalBase64(const char* field, std::string* out) {
    const json* value = Find(field, /*required=*/false);
    out->clear();
    if (value == nullptr) return true;
    if (!value->is_string()) {
      return FieldFail(field, "expected a base64 string, got " + Describe(*value));
    }
    std::optional<std::string> decoded = Base64Decode(value->get_ref<const std::string&>());
    if (!decoded) return FieldFail(field, "not valid base64");
    *out = std::move(*decoded);
    return true;
  }

  // `present`, when given, says whether an optional field was there.
  bool Unsigned(const char* field, std::uint64_t min, std::uint64_t max, std::uint64_t* out,
                bool required = true, bool* present = nullptr) {
    const json* value = Find(field, required);
    if (present != nullptr) *present = value != nullptr;
    if (value == nullptr) return !required;
    if (!ToUnsigned(*value, min, max, out)) return FieldFail(field, RangeText(min, max, *value));
    return true;
  }

  // An optional string of at most `max_bytes`; "" when absent.
  bool OptionalString(const char* field, std::size_t max_bytes, std::string* out) {
    out->clear();
    const json* value = Find(field, /*required=*/false);
    if (value == nullptr) return true;
    if (!value->is_string() || value->get_ref<const std::string&>().size() > max_bytes) {
      return FieldFail(field, "expected a string of at most " + std::to_string(max_bytes) +
                                  " bytes, got " + Describe(*value));
    }
    *out = value->get<std::string>();
    return true;
  }

  bool PositiveNumber(const char* field, double* out) {
    const json* value = Find(field, /*required=*/true);
    if (value == nullptr) return false;
    if (!value->is_number() || !std::isfinite(value->get<double>()) || value->get<double>() <= 0) {
      return FieldFail(field, "expected a positive number, got " + Describe(*value));
    }
    *out = value->get<double>();
    return true;
  }

  bool UnsignedArray(const char* field, std::uint64_t min, std::vector<std::uint64_t>* out) {
    const json* value = Find(field, /*required=*/true);
    if (value == nullptr) return false;
    if (!value->is_array() || value->empty()) {
      return FieldFail(field, "expected a non-empty array of integers, got " + Describe(*value));
    }
    out->clear();
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t i = 0; i < value->size(); ++i) {
      std::uint64_t element = 0;
      if (!ToUnsigned((*value)[i], min, max, &element)) {
        return FieldFail(field,
                         "element " + std::to_string(i) + ": " + RangeText(min, max, (*value)[i]));
      }
      out->push_back(element);
    }
    return true;
  }

 private:
  static bool ToUnsigned(const json& value, std::uint64_t min, std::uint64_t max,
                         std::uint64_t* out) {
    // Parsed JSON holds non-negative integers as unsigned, but a json built in C++ from an int
    // holds a signed one; both are fine when not negative.
    if (!value.is_number_integer()) return false;
    if (!value.is_number_unsigned() && value.get<std::int64_t>() < 0) return false;
    const auto number = value.get<std::uint64_t>();
    if (number < min || number > max) return false;
    *out = number;
    return true;
  }

  static std::string RangeText(std::uint64_t min, std::uint64_t max, const json& value) {
    std::string text = "expected an integer >= " + std::to_string(min);
    if (max != std::numeric_limits<std::uint64_t>::max()) text += " and <= " + std::to_string(max);
    return text + ", got " + Describe(value);
  }

  // The offending value, shortened: it came from a peer and may be large.
  static std::string Describe(const json& value) {
    std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
    constexpr std::size_t kMaxShown = 40;
    if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
    return std::string(value.type_name()) + " " + text;
  }

  // Null when absent; an absent required field also records the error.
  const json* Find(const char* field, bool required) {
    const auto it = message_.find(field);
    if (it == message_.end()) {
      if (required) Fail("missing field \"" + std::string(field) + "\"");
      return nullptr;
    }
    return &*it;
  }

  bool FieldFail(const char* field, const std::string& what) {
    return Fail("field \"" + std::string(field) + "\": " + what);
  }

  bool Fail(const std::string& what) {
    *error_ = std::string(type_) + ": " + what;
    return false;
  }

  const json& message_;
  const char* type_;
  std::string* error_;
};

}  // namespace

json ToJson(const Hello& message) {
  json out = Envelope(kTypeHello);
  out["agent_version"] = message.agent_version;
  out["ucx_version"] = message.ucx_version;
  out["nonce"] = HexEncode(message.nonce);
  return out;
}

json ToJson(const Challenge& message) {
  json out = Envelope(kTypeChallenge);
  out["agent_version"] = message.agent_version;
  out["ucx_version"] = message.ucx_version;
  out["nonce"] = HexEncode(message.nonce);
  out["proof"] = HexEncode(message.proof);
  return out;
}

json ToJson(const Response& message) {
  json out = Envelope(kTypeResponse);
  out["proof"] = HexEncode(message.proof);
  return out;
}

json ToJson(const ErrorReply& message) {
  json out = Envelope(kTypeError);
  out["reason"] = message.reason;
  out["message"] = message.message;
  if (message.retry_after_ms) out["retry_after_ms"] = *message.retry_after_ms;
  return out;
}

json ToJson(const ProbeSetup& message) {
  json out = Envelope(kTypeProbeSetup);
  out["kind"] = message.kind;
  out["rail"] = message.rail;
  out["message_sizes_bytes"] = message.message_sizes_bytes;
  out["duration_seconds"] = message.duration_seconds;
  out["max_bytes"] = message.max_bytes;
  if (!message.ucx_worker_address.empty()) {
    out["ucx_worker_address"] = Base64Encode(message.ucx_worker_address);
  }
  if (!message.ucx_rkey.empty()) out["ucx_rkey"] = Base64Encode(message.ucx_rkey);
  if (message.tcp_port) out["tcp_port"] = *message.tcp_port;
  if (message.streams != 1) out["streams"] = message.streams;
  if (!message.run_id.empty()) out["run_id"] = message.run_id;
  if (!message.memory.empty()) out["memory"] = message.memory;
  return out;
}

bool FromJson(const json& value, Hello* message, std::string* error) {
  error->clear();
  FieldReader reader(value, kTypeHello, error);
  return reader.CheckType() && reader.String("agent_version", &message->agent_version) &&
         reader.String("ucx_version", &message->ucx_version) &&
         reader.HexBytes("nonce", kNonceBytes, &message->nonce);
}

bool FromJson(const json& value, Challenge* message, std::string* error) {
  error->clear();
  FieldReader reader(value, kTypeChallenge, error);
  return reader.CheckType() && reader.String("agent_version", &message->agent_version) &&
         reader.String("ucx_version", &message->ucx_version) &&
         reader.HexBytes("nonce", kNonceBytes, &message->nonce) &&
         reader.HexBytes("proof", kProofBytes, &message->proof);
}

bool FromJson(const json& value, Response* message, std::string* error) {
  error->clear();
  FieldReader reader(value, kTypeResponse, error);
  return reader.CheckType() && reader.HexBytes("proof", kProofBytes, &message->proof);
}

bool FromJson(const json& value, ErrorReply* message, std::string* error) {
  error->clear();
  FieldReader reader(value, kTypeError, error);
  std::uint64_t retry_after_ms = 0;
  bool has_retry = false;
  const bool valid = reader.CheckType() && reader.String("reason", &message->reason) &&
                     reader.String("message", &message->message) &&
                     reader.Unsigned("retry_after_ms", 0, std::numeric_limits<std::uint64_t>::max(),
                                     &retry_after_ms, /*required=*/false, &has_retry);
  if (!valid) return false;
  message->retry_after_ms.reset();
  if (has_retry) message->retry_after_ms = retry_after_ms;
  return true;
}

// Longer than any memory type name; the handler refuses names it does not know.
constexpr std::size_t kMaxMemoryNameBytes = 32;

bool FromJson(const json& value, ProbeSetup* message, std::string* error) {
  error->clear();
  FieldReader reader(value, kTypeProbeSetup, error);
  std::uint64_t port = 0;
  std::uint64_t streams = 1;
  const bool valid =
      reader.CheckType() && reader.String("kind", &message->kind) &&
      reader.String("rail", &message->rail) &&
      reader.UnsignedArray("message_sizes_bytes", 1, &message->message_sizes_bytes) &&
      reader.PositiveNumber("duration_seconds", &message->duration_seconds) &&
      reader.Unsigned("max_bytes", 1, std::numeric_limits<std::uint64_t>::max(),
                      &message->max_bytes) &&
      reader.OptionalBase64("ucx_worker_address", &message->ucx_worker_address) &&
      reader.OptionalBase64("ucx_rkey", &message->ucx_rkey) &&
      reader.Unsigned("tcp_port", 1, 65535, &port, /*required=*/false) &&
      reader.Unsigned("streams", 1, kMaxProbeStreams, &streams, /*required=*/false) &&
      reader.OptionalString("run_id", kMaxRunIdBytes, &message->run_id) &&
      reader.OptionalString("memory", kMaxMemoryNameBytes, &message->memory);
  if (!valid) return false;
  message->streams = static_cast<std::uint32_t>(streams);
  message->tcp_port.reset();
  if (port != 0) message->tcp_port = static_cast<std::uint16_t>(port);
  return true;
}

}  // namespace rail::peer
