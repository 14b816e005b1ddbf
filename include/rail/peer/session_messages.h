// Messages of a control session beyond the handshake of messages.h. The whole exchange is
// described in responder.h. Each message here carries a free-form JSON object for what a probe
// kind needs (ports, addresses, counts), because only the probe kind knows those fields; the
// envelope and the versions are checked here.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "rail/peer/auth.h"

namespace rail::peer {

inline constexpr const char* kTypeWelcome = "welcome";
inline constexpr const char* kTypeProbeSetupReply = "probe_setup_reply";
inline constexpr const char* kTypeProbeDone = "probe_done";
inline constexpr const char* kTypeProbeReport = "probe_report";

// An insecure initiator sends a hello with "auth": "none" (and no secret-derived field at all).
// A responder with a secret refuses it with reason "auth"; an insecure responder answers a hello
// without it (one that expects a challenge) with reason "auth" and says that it has no secret.
inline constexpr const char* kHelloAuthField = "auth";
inline constexpr const char* kAuthNone = "none";
bool IsInsecureHello(const nlohmann::json& hello);

// R -> I after a successful handshake: the responder's versions, and whether the session is
// authenticated (false: both sides run insecure).
struct Welcome {
  AgentVersions versions;
  bool authenticated = true;
  // The MTU of each of the responder's rails, by rail name, for the peer_mtu health check.
  // Optional on the wire ("rail_mtus", sent when not empty): a welcome without it, from a peer
  // that predates it, means unknown.
  std::map<std::string, std::uint64_t> rail_mtus;
  // The responder's name for itself (responder.name, else its host name): a label beside the
  // discovery target, and how two targets that are one agent are told apart. Optional on the
  // wire ("name"); at most kMaxAgentNameBytes.
  std::string name;
};

inline constexpr std::size_t kMaxAgentNameBytes = 255;

// R -> I, answering probe_setup: the handler's fields (a JSON object) and the versions.
struct ProbeSetupReply {
  AgentVersions versions;
  nlohmann::json setup = nlohmann::json::object();
};

// I -> R once the initiator has finished its half: what it measured (a JSON object).
struct ProbeDone {
  nlohmann::json measured = nlohmann::json::object();
};

// R -> I answering probe_done: what the responder measured (a JSON object).
struct ProbeReport {
  nlohmann::json report = nlohmann::json::object();
};

nlohmann::json ToJson(const Welcome& message);
nlohmann::json ToJson(const ProbeSetupReply& message);
nlohmann::json ToJson(const ProbeDone& message);
nlohmann::json ToJson(const ProbeReport& message);

bool FromJson(const nlohmann::json& json, Welcome* message, std::string* error);
bool FromJson(const nlohmann::json& json, ProbeSetupReply* message, std::string* error);
bool FromJson(const nlohmann::json& json, ProbeDone* message, std::string* error);
bool FromJson(const nlohmann::json& json, ProbeReport* message, std::string* error);

// The message's "type", or "" when it has none.
std::string MessageType(const nlohmann::json& message);

// Error reasons are labels of exported counters, so a reason that came from a peer is kept only
// when it is one of the known tokens (auth, replay, limit, rate, timeout, malformed, oversized,
// version, unknown_kind, protocol, closed, shutdown, internal, ...); anything else becomes
// "peer_error", which keeps a hostile peer from creating label values.
std::string KnownReason(std::string_view reason);

}  // namespace rail::peer
