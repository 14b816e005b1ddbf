#include "rail/peer/session_messages.h"

#include <array>

#include "rail/peer/framing.h"
#include "shared_helpers.h"

namespace rail::peer {

namespace {

using nlohmann::json;

using detail::Envelope;

bool CheckType(const json& message, const char* type, std::string* error) {
  error->clear();
  if (!message.is_object()) {
    *error = std::string(type) + ": expected a JSON object";
    return false;
  }
  if (MessageType(message) != type) {
    *error =
        std::string("expected message type \"") + type + "\", got \"" + MessageType(message) + "\"";
    return false;
  }
  return true;
}

bool ReadVersions(const json& message, const char* type, AgentVersions* versions,
                  std::string* error) {
  for (const char* field : {"agent_version", "ucx_version"}) {
    const auto it = message.find(field);
    if (it == message.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
      *error = std::string(type) + ": field \"" + field + "\": expected a non-empty string";
      return false;
    }
  }
  versions->agent_version = message["agent_version"].get<std::string>();
  versions->ucx_version = message["ucx_version"].get<std::string>();
  return true;
}

bool ReadObject(const json& message, const char* type, const char* field, json* out,
                std::string* error) {
  const auto it = message.find(field);
  if (it == message.end() || !it->is_object()) {
    *error = std::string(type) + ": field \"" + field + "\": expected a JSON object";
    return false;
  }
  *out = *it;
  return true;
}

}  // namespace

bool IsInsecureHello(const json& hello) {
  const auto it = hello.find(kHelloAuthField);
  return it != hello.end() && it->is_string() && it->get_ref<const std::string&>() == kAuthNone;
}

std::string MessageType(const json& message) {
  if (!message.is_object()) return "";
  const auto it = message.find("type");
  return it != message.end() && it->is_string() ? it->get<std::string>() : "";
}

json ToJson(const Welcome& message) {
  json out = Envelope(kTypeWelcome);
  out["agent_version"] = message.versions.agent_version;
  out["ucx_version"] = message.versions.ucx_version;
  out["authenticated"] = message.authenticated;
  if (!message.rail_mtus.empty()) out["rail_mtus"] = message.rail_mtus;
  if (!message.name.empty()) out["name"] = message.name;
  return out;
}

json ToJson(const ProbeSetupReply& message) {
  json out = Envelope(kTypeProbeSetupReply);
  out["agent_version"] = message.versions.agent_version;
  out["ucx_version"] = message.versions.ucx_version;
  out["setup"] = message.setup.is_object() ? message.setup : json::object();
  return out;
}

json ToJson(const ProbeDone& message) {
  json out = Envelope(kTypeProbeDone);
  out["measured"] = message.measured.is_object() ? message.measured : json::object();
  return out;
}

json ToJson(const ProbeReport& message) {
  json out = Envelope(kTypeProbeReport);
  out["report"] = message.report.is_object() ? message.report : json::object();
  return out;
}

bool FromJson(const json& value, Welcome* message, std::string* error) {
  if (!CheckType(value, kTypeWelcome, error) ||
      !ReadVersions(value, kTypeWelcome, &message->versions, error)) {
    return false;
  }
  const auto it = value.find("authenticated");
  if (it == value.end() || !it->is_boolean()) {
    *error = "welcome: field \"authenticated\": expected a boolean";
    return false;
  }
  message->authenticated = it->get<bool>();
  message->rail_mtus.clear();
  if (const auto mtus = value.find("rail_mtus"); mtus != value.end()) {
    if (!mtus->is_object()) {
      *error = "welcome: field \"rail_mtus\": expected an object of rail name to MTU";
      return false;
    }
    for (const auto& [rail, mtu] : mtus->items()) {
      if (!mtu.is_number_unsigned()) {
        *error = "welcome: field \"rail_mtus\": MTU of rail \"" + rail +
                 "\": expected a non-negative integer";
        return false;
      }
      message->rail_mtus[rail] = mtu.get<std::uint64_t>();
    }
  }
  message->name.clear();
  if (const auto name = value.find("name"); name != value.end()) {
    if (!name->is_string() || name->get_ref<const std::string&>().size() > kMaxAgentNameBytes) {
      *error = "welcome: field \"name\": expected a string of at most 255 bytes";
      return false;
    }
    message->name = name->get<std::string>();
  }
  return true;
}

bool FromJson(const json& value, ProbeSetupReply* message, std::string* error) {
  return CheckType(value, kTypeProbeSetupReply, error) &&
         ReadVersions(value, kTypeProbeSetupReply, &message->versions, error) &&
         ReadObject(value, kTypeProbeSetupReply, "setup", &message->setup, error);
}

bool FromJson(const json& value, ProbeDone* message, std::string* error) {
  return CheckType(value, kTypeProbeDone, error) &&
         ReadObject(value, kTypeProbeDone, "measured", &message->measured, error);
}

bool FromJson(const json& value, ProbeReport* message, std::string* error) {
  return CheckType(value, kTypeProbeReport, error) &&
         ReadObject(value, kTypeProbeReport, "report", &message->report, error);
}

std::string KnownReason(std::string_view reason) {
  static constexpr std::array<std::string_view, 26> kKnown = {
      "auth",        "replay",       "limit",       "rate",   "timeout",  "malformed", "oversized",
      "version",     "unknown_kind", "protocol",    "closed", "shutdown", "internal",  "refused",
      "unreachable", "resolve",      "bind",        "io",     "setup",    "cancelled", "peer_error",
      "listen",      "ip_limit",     "not_allowed", "busy",   "budget"};
  for (std::string_view known : kKnown) {
    if (reason == known) return std::string(known);
  }
  return "peer_error";
}

}  // namespace rail::peer
