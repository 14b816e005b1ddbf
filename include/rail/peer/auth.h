// Mutual HMAC-SHA256 challenge-response over a shared secret (messages.h shows the exchange).
//
// Each side sends a fresh random nonce; each proof is HMAC-SHA256(secret, label || initiator nonce
// || responder nonce), with a different label per direction so that one side's proof can never be
// reflected back as the other's. Because every proof covers the verifier's own fresh nonce, a
// recorded handshake is useless to replay; the replay caches refuse it outright anyway (and count
// it), and catch a peer whose random generator repeats itself.
//
// The initiator checks the responder's proof before sending its own, so a party that does not
// know the secret learns nothing from a connecting agent. Both classes are pure state machines:
// the caller moves the messages, which keeps sockets out of this code and out of its tests.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "rail/base/clock.h"
#include "rail/peer/messages.h"
#include "rail/peer/secret.h"

namespace rail::peer {

// kNonceBytes random bytes from OpenSSL's CSPRNG; nullopt (and `error`) if it fails.
std::optional<std::string> RandomNonce(std::string* error);

// HMAC-SHA256 of `data` under `key`; nullopt (and `error`) if OpenSSL fails.
std::optional<std::string> HmacSha256(std::string_view key, std::string_view data,
                                      std::string* error);

// Comparison whose time does not depend on where the inputs differ (CRYPTO_memcmp), so a forged
// proof cannot be found byte by byte. Inputs of different lengths are simply unequal.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// Remembers nonces seen within `max_age` (at most `capacity` of them, oldest evicted first, so a
// flood cannot grow memory). Thread-safe: one cache is shared by all sessions of a responder.
class ReplayCache {
 public:
  ReplayCache(const base::Clock& clock, std::size_t capacity, base::Duration max_age);

  // Returns false if `nonce` was already seen within max_age (a replay); otherwise remembers it
  // and returns true.
  bool CheckAndRemember(std::string_view nonce);
  std::size_t size() const;

 private:
  void ExpireLocked(base::TimePoint now);

  struct Entry {
    base::TimePoint seen;
    std::string nonce;
  };
  const base::Clock& clock_;
  const std::size_t capacity_;
  const base::Duration max_age_;
  mutable std::mutex mutex_;
  std::deque<Entry> entries_;  // in the order seen
  std::unordered_set<std::string> nonces_;
};

struct AgentVersions {
  std::string agent_version;
  std::string ucx_version;
};

// The connecting side.
class HandshakeInitiator {
 public:
  // `seen_responder_nonces` may be shared between initiators; it must outlive this object.
  HandshakeInitiator(std::shared_ptr<const Secret> secret, AgentVersions versions,
                     ReplayCache* seen_responder_nonces);

  // First message. Fails only if the random generator does.
  std::optional<Hello> Start(std::string* error);
  // Verifies the responder's proof and returns the response that proves ours.
  std::optional<Response> OnChallenge(const Challenge& challenge, std::string* error);

  // True once the responder proved it knows the secret.
  bool authenticated() const { return state_ == State::kAuthenticated; }

 private:
  enum class State { kIdle, kAwaitingChallenge, kAuthenticated, kFailed };
  bool Fail(std::string message, std::string* error);

  std::shared_ptr<const Secret> secret_;
  AgentVersions versions_;
  ReplayCache* seen_responder_nonces_;
  State state_ = State::kIdle;
  std::string nonce_;
};

// The accepting side.
class HandshakeResponder {
 public:
  // `seen_initiator_nonces` is normally shared by every session; it must outlive this object.
  HandshakeResponder(std::shared_ptr<const Secret> secret, AgentVersions versions,
                     ReplayCache* seen_initiator_nonces);

  // Refuses a replayed nonce; otherwise answers with a challenge carrying our proof.
  std::optional<Challenge> OnHello(const Hello& hello, std::string* error);
  // Verifies the initiator's proof.
  bool OnResponse(const Response& response, std::string* error);

  bool authenticated() const { return state_ == State::kAuthenticated; }
  // The initiator's hello (its agent and UCX versions), valid after OnHello.
  const Hello& peer_hello() const { return peer_hello_; }

 private:
  enum class State { kAwaitingHello, kAwaitingResponse, kAuthenticated, kFailed };
  bool Fail(std::string message, std::string* error);

  std::shared_ptr<const Secret> secret_;
  AgentVersions versions_;
  ReplayCache* seen_initiator_nonces_;
  State state_ = State::kAwaitingHello;
  Hello peer_hello_;
  std::string nonce_;
};

// The proofs, exposed for tests and for anyone checking the protocol by hand.
std::optional<std::string> ResponderProof(std::string_view secret, std::string_view initiator_nonce,
                                          std::string_view responder_nonce, std::string* error);
std::optional<std::string> InitiatorProof(std::string_view secret, std::string_view initiator_nonce,
                                          std::string_view responder_nonce, std::string* error);

}  // namespace rail::peer
