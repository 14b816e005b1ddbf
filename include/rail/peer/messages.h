// Messages of the peer control channel. Structs hold decoded values (raw bytes for nonces, proofs,
// worker addresses and rkeys); the JSON form adds the envelope ("v", "type") and carries binary
// fields as hex (nonces, proofs) or base64 (UCX blobs, which are larger).
//
// Handshake, initiator (I) and responder (R):
//   I -> R  hello      {agent_version, ucx_version, nonce}
//   R -> I  challenge  {agent_version, ucx_version, nonce, proof}   R proves it knows the secret
//   I -> R  response   {proof}                                      I proves it knows the secret
// then probe_setup messages, or an error at any point. See auth.h for what the proofs cover, and
// session_messages.h for the rest of a session (welcome, probe_setup_reply, probe_done, ...).
//
// FromJson rejects a missing or mistyped field with an error that names the message type and the
// field, so that the peer (and whoever reads its log) learns what to fix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rail::peer {

// Wire sizes of the handshake's binary fields.
inline constexpr std::size_t kNonceBytes = 32;
inline constexpr std::size_t kProofBytes = 32;  // HMAC-SHA256
// Upper bound of ProbeSetup::streams: each stream is a thread and a socket on the responder.
inline constexpr std::uint32_t kMaxProbeStreams = 64;
// Upper bound of ProbeSetup::run_id's length: the responder keeps it while the run lasts.
inline constexpr std::size_t kMaxRunIdBytes = 64;

inline constexpr const char* kTypeHello = "hello";
inline constexpr const char* kTypeChallenge = "challenge";
inline constexpr const char* kTypeResponse = "response";
inline constexpr const char* kTypeProbeSetup = "probe_setup";
inline constexpr const char* kTypeError = "error";

struct Hello {
  std::string agent_version;
  std::string ucx_version;  // e.g. "1.13.1"; a mismatch between peers is exported, not refused
  std::string nonce;        // raw bytes (kNonceBytes)
};

struct Challenge {
  std::string agent_version;
  std::string ucx_version;
  std::string nonce;  // the responder's, raw bytes
  std::string proof;  // HMAC-SHA256, raw bytes
};

struct Response {
  std::string proof;  // HMAC-SHA256, raw bytes
};

// Sent by either side in place of the expected message. `reason` is a stable token for counting
// (e.g. "auth", "limit", "malformed", "version"); `message` is for people.
struct ErrorReply {
  std::string reason;
  std::string message;
  // With reason "busy": milliseconds after which a retry should be admitted. Optional on the
  // wire (peers that predate it neither send nor read it).
  std::optional<std::uint64_t> retry_after_ms;
};

// Sets up one probe. The initiator sends its side (its worker address for UCX kinds); the
// responder answers with a probe_setup of its own (its worker address, the rkey of the memory it
// registered, the TCP port of its sink). Fields a kind does not use stay empty.
struct ProbeSetup {
  std::string kind;  // e.g. "ucx_throughput", "ucx_rtt", "tcp_throughput", "tcp_rtt"
  std::string rail;
  std::vector<std::uint64_t> message_sizes_bytes;  // at least one, each > 0
  double duration_seconds = 0;                     // > 0
  std::uint64_t max_bytes = 0;     // upper bound of bytes the probe moves; checked against limits
  std::string ucx_worker_address;  // raw bytes, base64 on the wire; optional
  std::string ucx_rkey;            // raw bytes, base64 on the wire; optional
  std::optional<std::uint16_t> tcp_port;  // 1..65535; optional
  // Parallel TCP streams (tcp_throughput); 1..kMaxProbeStreams. Optional on the wire, where it
  // appears only when not 1, so messages of peers that predate it still mean one stream.
  std::uint32_t streams = 1;
  // Shared by the control sessions of one initiator's run (a multi-rail run opens one per rail),
  // so that the responder admits them together (bulk_gate.h). Optional; "" when absent.
  std::string run_id;
  // The memory type of the responder's buffer ("cuda", "cuda_host"; gpu::MemoryTypeName), so that
  // both sides hold the same kind. Optional; "" when absent: host memory. A responder that
  // predates it ignores it and answers without "memory" in its setup reply, which the initiator
  // refuses for anything but host memory.
  std::string memory;
};

nlohmann::json ToJson(const Hello& message);
nlohmann::json ToJson(const Challenge& message);
nlohmann::json ToJson(const Response& message);
nlohmann::json ToJson(const ErrorReply& message);
nlohmann::json ToJson(const ProbeSetup& message);

// Each returns false and sets `error` when `json` is not a valid message of that type. The
// protocol version is the decoder's business (framing.h) and is not checked again here.
bool FromJson(const nlohmann::json& json, Hello* message, std::string* error);
bool FromJson(const nlohmann::json& json, Challenge* message, std::string* error);
bool FromJson(const nlohmann::json& json, Response* message, std::string* error);
bool FromJson(const nlohmann::json& json, ErrorReply* message, std::string* error);
bool FromJson(const nlohmann::json& json, ProbeSetup* message, std::string* error);

}  // namespace rail::peer
