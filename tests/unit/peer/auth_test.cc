#include "rail/peer/auth.h"

#include <gtest/gtest.h>

#include <chrono>

#include "rail/peer/encoding.h"
#include "rail/peer/framing.h"
#include "support/fake_clock.h"

namespace rail::peer {
namespace {

using namespace std::chrono_literals;
using test::FakeClock;

std::shared_ptr<const Secret> MakeSecret(std::string_view bytes) {
  return std::make_shared<const Secret>(bytes);
}

// Sends a message the way the control channel does (JSON in a frame) and parses it back, so the
// handshake tests cover the wire format too.
template <typename Message>
Message OverTheWire(const Message& message) {
  std::string error;
  const std::optional<std::string> frame =
      EncodeFrame(ToJson(message), kDefaultMaxFrameBytes, &error);
  EXPECT_TRUE(frame) << error;
  const std::string bytes = frame.value_or("");
  FrameDecoder decoder;
  std::string_view input = bytes;
  DecodeResult result = decoder.Decode(&input);
  EXPECT_EQ(result.status, DecodeStatus::kFrame) << result.error;
  Message decoded;
  EXPECT_TRUE(FromJson(result.message, &decoded, &error)) << error;
  return decoded;
}

class HandshakeTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  ReplayCache initiator_cache_{clock_, 1024, 10min};
  ReplayCache responder_cache_{clock_, 1024, 10min};
  std::shared_ptr<const Secret> secret_ = MakeSecret("correct horse battery staple");
  AgentVersions initiator_versions_{"0.1.0", "1.13.1"};
  AgentVersions responder_versions_{"0.1.1", "1.14.0"};
};

TEST(Hmac, MatchesRfc4231TestCase2) {
  std::string error;
  auto mac = HmacSha256("Jefe", "what do ya want for nothing?", &error);
  ASSERT_TRUE(mac) << error;
  EXPECT_EQ(HexEncode(*mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Hmac, RandomNoncesAreFreshAndFullLength) {
  std::string error;
  auto a = RandomNonce(&error);
  auto b = RandomNonce(&error);
  ASSERT_TRUE(a && b) << error;
  EXPECT_EQ(a->size(), kNonceBytes);
  EXPECT_NE(*a, *b);
}

TEST(Hmac, ConstantTimeEqualsComparesLengthAndContent) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
}

TEST(Hmac, DirectionsHaveDifferentProofs) {
  std::string error;
  const std::string a(kNonceBytes, 'a'), b(kNonceBytes, 'b');
  EXPECT_NE(ResponderProof("s", a, b, &error), InitiatorProof("s", a, b, &error));
}

TEST_F(HandshakeTest, GoodSecretAuthenticatesBothSides) {
  HandshakeInitiator initiator(secret_, initiator_versions_, &initiator_cache_);
  HandshakeResponder responder(secret_, responder_versions_, &responder_cache_);
  std::string error;

  const std::optional<Hello> hello = initiator.Start(&error);
  ASSERT_TRUE(hello) << error;
  const std::optional<Challenge> challenge = responder.OnHello(OverTheWire(*hello), &error);
  ASSERT_TRUE(challenge) << error;
  EXPECT_EQ(challenge->agent_version, "0.1.1");
  EXPECT_EQ(challenge->ucx_version, "1.14.0");
  EXPECT_NE(challenge->nonce, hello->nonce);

  const std::optional<Response> response = initiator.OnChallenge(OverTheWire(*challenge), &error);
  ASSERT_TRUE(response) << error;
  EXPECT_TRUE(initiator.authenticated());
  EXPECT_FALSE(responder.authenticated());

  EXPECT_TRUE(responder.OnResponse(OverTheWire(*response), &error)) << error;
  EXPECT_TRUE(responder.authenticated());
  EXPECT_EQ(responder.peer_hello().ucx_version, "1.13.1");
}

TEST_F(HandshakeTest, InitiatorWithWrongSecretIsRefused) {
  HandshakeInitiator initiator(MakeSecret("wrong"), initiator_versions_, &initiator_cache_);
  HandshakeResponder responder(secret_, responder_versions_, &responder_cache_);
  std::string error;
  const auto hello = initiator.Start(&error);
  const auto challenge = responder.OnHello(*hello, &error);
  ASSERT_TRUE(challenge);
  // The initiator notices first: the responder's proof does not match its (wrong) secret.
  EXPECT_FALSE(initiator.OnChallenge(*challenge, &error));
  EXPECT_EQ(error, "responder failed to prove knowledge of the shared secret (wrong secret?)");
  EXPECT_FALSE(initiator.authenticated());
}

TEST_F(HandshakeTest, ForgedResponseIsRefusedByTheResponder) {
  HandshakeResponder responder(secret_, responder_versions_, &responder_cache_);
  std::string error;
  const std::string initiator_nonce(kNonceBytes, 'n');
  const auto challenge = responder.OnHello(Hello{"x", "y", initiator_nonce}, &error);
  ASSERT_TRUE(challenge);
  // An initiator that skips the check of the responder's proof and answers with a proof made
  // from the wrong secret.
  auto forged = InitiatorProof("wrong", initiator_nonce, challenge->nonce, &error);
  EXPECT_FALSE(responder.OnResponse(Response{*forged}, &error));
  EXPECT_EQ(error, "initiator failed to prove knowledge of the shared secret (wrong secret?)");
  EXPECT_FALSE(responder.authenticated());
  // A failed handshake stays failed: no second guess on the same session.
  auto right = InitiatorProof(secret_->bytes(), initiator_nonce, challenge->nonce, &error);
  EXPECT_FALSE(responder.OnResponse(Response{*right}, &error));
}

TEST_F(HandshakeTest, TamperedProofIsRefused) {
  HandshakeInitiator initiator(secret_, initiator_versions_, &initiator_cache_);
  HandshakeResponder responder(secret_, responder_versions_, &responder_cache_);
  std::string error;
  const auto hello = initiator.Start(&error);
  auto challenge = responder.OnHello(*hello, &error);
  challenge->proof[kProofBytes - 1] ^= 1;
  EXPECT_FALSE(initiator.OnChallenge(*challenge, &error));
}

TEST_F(HandshakeTest, ReplayedHandshakeIsRefused) {
  // Record a complete good handshake, as an eavesdropper on the control connection would.
  HandshakeInitiator initiator(secret_, initiator_versions_, &initiator_cache_);
  HandshakeResponder responder(secret_, responder_versions_, &responder_cache_);
  std::string error;
  const Hello recorded_hello = *initiator.Start(&error);
  const Challenge challenge = *responder.OnHello(recorded_hello, &error);
  const Response recorded_response = *initiator.OnChallenge(challenge, &error);
  ASSERT_TRUE(responder.OnResponse(recorded_response, &error)) << error;

  // Replaying the hello to another session of the same responder: the nonce is remembered.
  clock_.Advance(30s);
  HandshakeResponder replay_target(secret_, responder_versions_, &responder_cache_);
  EXPECT_FALSE(replay_target.OnHello(recorded_hello, &error));
  EXPECT_EQ(error, "initiator reused a nonce seen recently (replayed handshake)");

  // Even a responder that forgot the nonce (restarted, empty cache) refuses the recorded
  // response: it answers with a fresh nonce that the recorded proof does not cover.
  ReplayCache empty_cache(clock_, 1024, 10min);
  HandshakeResponder restarted(secret_, responder_versions_, &empty_cache);
  ASSERT_TRUE(restarted.OnHello(recorded_hello, &error));
  EXPECT_FALSE(restarted.OnResponse(recorded_response, &error));
  EXPECT_FALSE(restarted.authenticated());
}

TEST_F(HandshakeTest, ResponderReusingANonceIsRefusedByTheInitiator) {
  // A responder whose random generator repeats: the same responder nonce twice.
  std::string error;
  const std::string responder_nonce(kNonceBytes, 'r');
  for (int attempt = 0; attempt < 2; ++attempt) {
    HandshakeInitiator initiator(secret_, initiator_versions_, &initiator_cache_);
    const auto hello = initiator.Start(&error);
    auto proof = ResponderProof(secret_->bytes(), hello->nonce, responder_nonce, &error);
    const auto response =
        initiator.OnChallenge(Challenge{"v", "u", responder_nonce, *proof}, &error);
    EXPECT_EQ(response.has_value(), attempt == 0) << error;
  }
  EXPECT_EQ(error, "responder reused a nonce seen recently (replayed handshake)");
}

TEST_F(HandshakeTest, EchoedNonceIsRefused) {
  HandshakeInitiator initiator(secret_, initiator_versions_, &initiator_cache_);
  std::string error;
  const auto hello = initiator.Start(&error);
  auto proof = ResponderProof(secret_->bytes(), hello->nonce, hello->nonce, &error);
  EXPECT_FALSE(initiator.OnChallenge(Challenge{"v", "u", hello->nonce, *proof}, &error));
  EXPECT_EQ(error, "responder echoed our nonce");
}

TEST_F(HandshakeTest, MessagesOutOfOrderAreRefused) {
  HandshakeInitiator initiator(secret_, initiator_versions_, &initiator_cache_);
  HandshakeResponder responder(secret_, responder_versions_, &responder_cache_);
  std::string error;
  EXPECT_FALSE(initiator.OnChallenge(
      Challenge{"v", "u", std::string(kNonceBytes, 'x'), std::string(kProofBytes, 'p')}, &error));
  EXPECT_FALSE(responder.OnResponse(Response{std::string(kProofBytes, 'p')}, &error));
  EXPECT_EQ(error, "unexpected response: no challenge is waiting for one");
}

TEST(ReplayCache, ForgetsNoncesOlderThanMaxAge) {
  FakeClock clock;
  ReplayCache cache(clock, 100, 5min);
  EXPECT_TRUE(cache.CheckAndRemember("n1"));
  EXPECT_FALSE(cache.CheckAndRemember("n1"));
  clock.Advance(4min);
  EXPECT_FALSE(cache.CheckAndRemember("n1"));
  clock.Advance(1min);
  EXPECT_TRUE(cache.CheckAndRemember("n1"));  // aged out, remembered afresh
  EXPECT_EQ(cache.size(), 1u);
}

TEST(ReplayCache, StaysWithinCapacityEvictingTheOldest) {
  FakeClock clock;
  ReplayCache cache(clock, 3, 1h);
  for (const char* nonce : {"a", "b", "c", "d"}) EXPECT_TRUE(cache.CheckAndRemember(nonce));
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_FALSE(cache.CheckAndRemember("d"));
  EXPECT_TRUE(cache.CheckAndRemember("a"));  // evicted to make room for "d"
}

}  // namespace
}  // namespace rail::peer
