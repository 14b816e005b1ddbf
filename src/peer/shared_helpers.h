// Small helpers more than one peer source needs, defined once: a unity build compiles several
// sources as one translation unit, where two sources' private copies would collide.
#pragma once

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "rail/peer/connection.h"
#include "rail/peer/framing.h"

namespace rail::peer::detail {

// Fills `error` and returns false, for the `return Fail(...)` of a failed step.
inline bool Fail(NetError* error, std::string reason, std::string message) {
  error->reason = std::move(reason);
  error->message = std::move(message);
  return false;
}

inline std::string ErrnoText(int error_number) {
  return std::strerror(error_number);
}

// The fields every control-channel message starts with.
inline nlohmann::json Envelope(const char* type) {
  return nlohmann::json{{"v", kProtocolVersion}, {"type", type}};
}

}  // namespace rail::peer::detail
