#include "rail/peer/auth.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <limits>

namespace rail::peer {

namespace {

// Same length for both directions; the nonces that follow have fixed lengths, so the MAC input
// is unambiguous.
constexpr std::string_view kResponderLabel = "rail_exporter v1 responder";
constexpr std::string_view kInitiatorLabel = "rail_exporter v1 initiator";

std::string OpenSslError(const char* what) {
  const unsigned long code = ERR_get_error();
  char text[256] = "unknown error";
  if (code != 0) ERR_error_string_n(code, text, sizeof(text));
  ERR_clear_error();
  return std::string(what) + ": " + text;
}

std::optional<std::string> Proof(std::string_view label, std::string_view secret,
                                 std::string_view initiator_nonce, std::string_view responder_nonce,
                                 std::string* error) {
  std::string data;
  data.reserve(label.size() + initiator_nonce.size() + responder_nonce.size());
  data.append(label).append(initiator_nonce).append(responder_nonce);
  return HmacSha256(secret, data, error);
}

}  // namespace

std::optional<std::string> RandomNonce(std::string* error) {
  std::string nonce(kNonceBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) !=
      1) {
    *error = OpenSslError("RAND_bytes failed");
    return std::nullopt;
  }
  return nonce;
}

std::optional<std::string> HmacSha256(std::string_view key, std::string_view data,
                                      std::string* error) {
  if (key.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    *error = "HMAC key too long";
    return std::nullopt;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest,
           &digest_length) == nullptr) {
    *error = OpenSslError("HMAC-SHA256 failed");
    return std::nullopt;
  }
  return std::string(reinterpret_cast<const char*>(digest), digest_length);
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<std::string> ResponderProof(std::string_view secret, std::string_view initiator_nonce,
                                          std::string_view responder_nonce, std::string* error) {
  return Proof(kResponderLabel, secret, initiator_nonce, responder_nonce, error);
}

std::optional<std::string> InitiatorProof(std::string_view secret, std::string_view initiator_nonce,
                                          std::string_view responder_nonce, std::string* error) {
  return Proof(kInitiatorLabel, secret, initiator_nonce, responder_nonce, error);
}

// ---- ReplayCache ----

ReplayCache::ReplayCache(const base::Clock& clock, std::size_t capacity, base::Duration max_age)
    : clock_(clock), capacity_(std::max<std::size_t>(capacity, 1)), max_age_(max_age) {}

bool ReplayCache::CheckAndRemember(std::string_view nonce) {
  const std::lock_guard lock(mutex_);
  const base::TimePoint now = clock_.Now();
  ExpireLocked(now);
  std::string key(nonce);
  if (nonces_.contains(key)) return false;
  if (entries_.size() >= capacity_) {
    nonces_.erase(entries_.front().nonce);
    entries_.pop_front();
  }
  nonces_.insert(key);
  entries_.push_back({now, std::move(key)});
  return true;
}

std::size_t ReplayCache::size() const {
  const std::lock_guard lock(mutex_);
  return entries_.size();
}

void ReplayCache::ExpireLocked(base::TimePoint now) {
  while (!entries_.empty() && now - entries_.front().seen >= max_age_) {
    nonces_.erase(entries_.front().nonce);
    entries_.pop_front();
  }
}

// ---- HandshakeInitiator ----

HandshakeInitiator::HandshakeInitiator(std::shared_ptr<const Secret> secret, AgentVersions versions,
                                       ReplayCache* seen_responder_nonces)
    : secret_(std::move(secret)),
      versions_(std::move(versions)),
      seen_responder_nonces_(seen_responder_nonces) {}

bool HandshakeInitiator::Fail(std::string message, std::string* error) {
  state_ = State::kFailed;
  *error = std::move(message);
  return false;
}

std::optional<Hello> HandshakeInitiator::Start(std::string* error) {
  if (state_ != State::kIdle) {
    Fail("handshake already started", error);
    return std::nullopt;
  }
  std::optional<std::string> nonce = RandomNonce(error);
  if (!nonce) {
    state_ = State::kFailed;
    return std::nullopt;
  }
  nonce_ = *nonce;
  state_ = State::kAwaitingChallenge;
  return Hello{versions_.agent_version, versions_.ucx_version, std::move(*nonce)};
}

std::optional<Response> HandshakeInitiator::OnChallenge(const Challenge& challenge,
                                                        std::string* error) {
  if (state_ != State::kAwaitingChallenge) {
    Fail("unexpected challenge: no hello is waiting for one", error);
    return std::nullopt;
  }
  // A responder echoing our own nonce could otherwise make the two directions' inputs overlap.
  if (ConstantTimeEquals(challenge.nonce, nonce_)) {
    Fail("responder echoed our nonce", error);
    return std::nullopt;
  }
  std::optional<std::string> expected =
      ResponderProof(secret_->bytes(), nonce_, challenge.nonce, error);
  if (!expected) {
    state_ = State::kFailed;
    return std::nullopt;
  }
  if (!ConstantTimeEquals(*expected, challenge.proof)) {
    Fail("responder failed to prove knowledge of the shared secret (wrong secret?)", error);
    return std::nullopt;
  }
  if (!seen_responder_nonces_->CheckAndRemember(challenge.nonce)) {
    Fail("responder reused a nonce seen recently (replayed handshake)", error);
    return std::nullopt;
  }
  std::optional<std::string> proof =
      InitiatorProof(secret_->bytes(), nonce_, challenge.nonce, error);
  if (!proof) {
    state_ = State::kFailed;
    return std::nullopt;
  }
  state_ = State::kAuthenticated;
  return Response{std::move(*proof)};
}

// ---- HandshakeResponder ----

HandshakeResponder::HandshakeResponder(std::shared_ptr<const Secret> secret, AgentVersions versions,
                                       ReplayCache* seen_initiator_nonces)
    : secret_(std::move(secret)),
      versions_(std::move(versions)),
      seen_initiator_nonces_(seen_initiator_nonces) {}

bool HandshakeResponder::Fail(std::string message, std::string* error) {
  state_ = State::kFailed;
  *error = std::move(message);
  return false;
}

std::optional<Challenge> HandshakeResponder::OnHello(const Hello& hello, std::string* error) {
  if (state_ != State::kAwaitingHello) {
    Fail("unexpected hello: handshake already in progress", error);
    return std::nullopt;
  }
  if (hello.nonce.size() != kNonceBytes) {
    Fail("hello nonce must be " + std::to_string(kNonceBytes) + " bytes", error);
    return std::nullopt;
  }
  if (!seen_initiator_nonces_->CheckAndRemember(hello.nonce)) {
    Fail("initiator reused a nonce seen recently (replayed handshake)", error);
    return std::nullopt;
  }
  std::optional<std::string> nonce = RandomNonce(error);
  if (!nonce) {
    state_ = State::kFailed;
    return std::nullopt;
  }
  std::optional<std::string> proof = ResponderProof(secret_->bytes(), hello.nonce, *nonce, error);
  if (!proof) {
    state_ = State::kFailed;
    return std::nullopt;
  }
  peer_hello_ = hello;
  nonce_ = *nonce;
  state_ = State::kAwaitingResponse;
  return Challenge{versions_.agent_version, versions_.ucx_version, std::move(*nonce),
                   std::move(*proof)};
}

bool HandshakeResponder::OnResponse(const Response& response, std::string* error) {
  if (state_ != State::kAwaitingResponse) {
    return Fail("unexpected response: no challenge is waiting for one", error);
  }
  std::optional<std::string> expected =
      InitiatorProof(secret_->bytes(), peer_hello_.nonce, nonce_, error);
  if (!expected) {
    state_ = State::kFailed;
    return false;
  }
  if (!ConstantTimeEquals(*expected, response.proof)) {
    return Fail("initiator failed to prove knowledge of the shared secret (wrong secret?)", error);
  }
  state_ = State::kAuthenticated;
  return true;
}

}  // namespace rail::peer
