#include "rail/peer/responder.h"

#include <gtest/gtest.h>

#include "rail/peer/auth.h"
#include "responder_fixture.h"
#include "support/deadline.h"
#include "support/fake_clock.h"

namespace rail::peer::testing {
namespace {

using nlohmann::json;

TEST_F(ResponderTest, WelcomeCarriesTheRailMtus) {
  auto options = Options();
  options.rail_mtus = [] { return std::map<std::string, std::uint64_t>{{"rail0", 9000}}; };
  StartResponder(std::move(options));
  NetError error;
  auto client = Connect(ClientWith(secret_), &error);
  ASSERT_NE(client, nullptr) << error.reason << ": " << error.message;
  EXPECT_EQ(client->peer_rail_mtus(), (std::map<std::string, std::uint64_t>{{"rail0", 9000}}));
}

TEST_F(ResponderTest, WelcomeWithoutRailMtusMeansUnknown) {
  StartResponder(Options());  // no rail_mtus function, as a responder that predates them
  NetError error;
  auto client = Connect(ClientWith(secret_), &error);
  ASSERT_NE(client, nullptr) << error.reason << ": " << error.message;
  EXPECT_TRUE(client->peer_rail_mtus().empty());
}

TEST_F(ResponderTest, GoodHandshakeThenProbe) {
  StartResponder(Options());
  NetError error;
  auto client = Connect(ClientWith(secret_), &error);
  ASSERT_NE(client, nullptr) << error.reason << ": " << error.message;
  EXPECT_TRUE(client->authenticated());
  EXPECT_EQ(client->peer_versions().agent_version, "responder-1.0");
  EXPECT_EQ(client->peer_versions().ucx_version, "1.13.1");
  RunFakeProbe(*client);
  RunFakeProbe(*client);  // a session may carry several probes

  ASSERT_TRUE(WaitFor([](const ResponderStats& stats) { return stats.probes_total == 2; }));
  const ResponderStats stats = responder_->Snapshot();
  EXPECT_EQ(stats.sessions_total, 1u);
  EXPECT_EQ(stats.connections_total, 1u);
  EXPECT_EQ(stats.active_sessions, 1u);
  ASSERT_EQ(stats.peers.count("127.0.0.1"), 1u);
  const PeerInfo& peer = stats.peers.at("127.0.0.1");
  EXPECT_EQ(peer.versions.agent_version, "initiator-1.0");
  EXPECT_EQ(peer.versions.ucx_version, "1.12.0");
  EXPECT_TRUE(peer.authenticated);
  EXPECT_EQ(peer.probes, 2u);
  EXPECT_TRUE(stats.errors_by_reason.empty());

  client.reset();
  EXPECT_TRUE(WaitFor([](const ResponderStats& s) { return s.active_sessions == 0; }));
}

TEST_F(ResponderTest, WrongSecretIsRefusedAndCounted) {
  StartResponder(Options());
  NetError error;
  auto client = Connect(ClientWith(std::make_shared<const Secret>("a wrong secret")), &error);
  EXPECT_EQ(client, nullptr);
  EXPECT_EQ(error.reason, "auth") << error.message;
  EXPECT_TRUE(WaitForError("auth"));
  EXPECT_EQ(responder_->Snapshot().sessions_total, 0u);
}

TEST_F(ResponderTest, InsecureClientIsRefusedBySecureResponder) {
  StartResponder(Options());
  NetError error;
  auto client = Connect(ClientWith(nullptr), &error);
  EXPECT_EQ(client, nullptr);
  EXPECT_EQ(error.reason, "auth");
  EXPECT_NE(error.message.find("insecure"), std::string::npos) << error.message;
  EXPECT_TRUE(WaitForError("auth"));
}

TEST_F(ResponderTest, SecureClientGetsAClearErrorFromInsecureResponder) {
  ResponderOptions options = Options();
  options.secret = nullptr;
  options.insecure = true;
  StartResponder(options);
  NetError error;
  EXPECT_EQ(Connect(ClientWith(secret_), &error), nullptr);
  EXPECT_EQ(error.reason, "auth");
  EXPECT_NE(error.message.find("insecure"), std::string::npos) << error.message;

  auto insecure = Connect(ClientWith(nullptr), &error);
  ASSERT_NE(insecure, nullptr) << error.message;
  EXPECT_FALSE(insecure->authenticated());
  RunFakeProbe(*insecure);
  EXPECT_FALSE(responder_->Snapshot().peers.at("127.0.0.1").authenticated);
}

TEST_F(ResponderTest, WithoutSecretOrInsecureOptionEveryPeerIsRefused) {
  ResponderOptions options = Options();
  options.secret = nullptr;
  StartResponder(options);
  NetError error;
  EXPECT_EQ(Connect(ClientWith(nullptr), &error), nullptr);
  EXPECT_EQ(error.reason, "auth");
  EXPECT_EQ(Connect(ClientWith(secret_), &error), nullptr);
  EXPECT_EQ(error.reason, "auth");
  EXPECT_TRUE(WaitForError("auth", 2));
}

TEST_F(ResponderTest, BadFramesGetErrorRepliesWhileOthersAreServed) {
  ResponderOptions options = Options();
  options.limits.max_frame_bytes = 1024;
  StartResponder(options);
  NetError error;
  auto good = Connect(ClientWith(secret_), &error);  // a session open throughout
  ASSERT_NE(good, nullptr) << error.message;

  const auto frame = [](const std::string& payload) {
    std::string out(4, '\0');
    out[2] = static_cast<char>(payload.size() >> 8);
    out[3] = static_cast<char>(payload.size() & 0xff);
    return out + payload;
  };
  struct Case {
    std::string bytes;
    const char* reason;
  };
  for (const Case& test : {Case{frame("\x01garbage\xff"), "malformed"},
                           Case{std::string("\x00\x10\x00\x00", 4), "oversized"},
                           Case{frame(R"({"v":2,"type":"hello"})"), "version"},
                           Case{frame(R"({"v":1,"type":"hello","nonce":"zz"})"), "malformed"}}) {
    Connection raw = Raw();
    ASSERT_TRUE(raw.SendRaw(test.bytes, rail::test::In(1s), &error));
    auto reply = raw.Receive(rail::test::In(2s), &error);
    ASSERT_TRUE(reply) << test.reason << ": " << error.reason << " " << error.message;
    ErrorReply parsed;
    std::string parse_error;
    ASSERT_TRUE(FromJson(*reply, &parsed, &parse_error)) << parse_error;
    EXPECT_EQ(parsed.reason, test.reason) << parsed.message;
    EXPECT_FALSE(parsed.message.empty());
  }
  EXPECT_TRUE(WaitForError("malformed", 2));
  EXPECT_EQ(Errors("oversized"), 1u);
  EXPECT_EQ(Errors("version"), 1u);

  RunFakeProbe(*good);
  auto another = Connect(ClientWith(secret_), &error);
  ASSERT_NE(another, nullptr) << error.message;
  RunFakeProbe(*another);
}

TEST_F(ResponderTest, ReplayedHelloIsRefused) {
  StartResponder(Options());
  const Hello hello{"initiator-1.0", "1.12.0", std::string(kNonceBytes, '\x42')};
  NetError error;
  {
    Connection first = Raw();
    ASSERT_TRUE(first.Send(ToJson(hello), rail::test::In(1s), &error));
    auto challenge = first.Receive(rail::test::In(2s), &error);
    ASSERT_TRUE(challenge) << error.message;
    EXPECT_EQ(MessageType(*challenge), "challenge");
  }
  Connection second = Raw();
  ASSERT_TRUE(second.Send(ToJson(hello), rail::test::In(1s), &error));
  auto reply = second.Receive(rail::test::In(2s), &error);
  ASSERT_TRUE(reply) << error.message;
  EXPECT_EQ((*reply)["reason"], "replay");
  EXPECT_TRUE(WaitForError("replay"));
}

TEST_F(ResponderTest, SessionLimitRefusesTheNextPeer) {
  ResponderOptions options = Options();
  options.limits.max_concurrent_sessions = 2;
  options.handshake_timeout = 2s;
  StartResponder(options);
  NetError error;
  auto first = Connect(ClientWith(secret_), &error);
  auto second = Connect(ClientWith(secret_), &error);
  ASSERT_NE(first, nullptr) << error.message;
  ASSERT_NE(second, nullptr) << error.message;
  EXPECT_EQ(Connect(ClientWith(secret_), &error), nullptr);
  EXPECT_EQ(error.reason, "limit") << error.message;
  EXPECT_EQ(Errors("limit"), 1u);
  EXPECT_EQ(responder_->Snapshot().active_sessions, 2u);

  first.reset();  // frees a slot
  ASSERT_TRUE(WaitFor([](const ResponderStats& s) { return s.active_sessions == 1; }));
  auto third = Connect(ClientWith(secret_), &error);
  ASSERT_NE(third, nullptr) << error.message;
  RunFakeProbe(*third);
}

// The handshake deadline is an hour on a clock that moves an hour at each reading: the
// responder drops a silent client and a slow one at once, which it can only do if its waits are
// measured on its injected clock (on the real one this test would hang for an hour).
TEST_F(ResponderTest, SilentAndSlowClientsAreDroppedAtTheHandshakeDeadline) {
  ResponderOptions options = Options();
  options.handshake_timeout = 1h;
  options.clock = &stepping_clock_;
  StartResponder(options);
  NetError error;
  Connection silent = Raw();
  auto reply = silent.Receive(rail::test::In(30s), &error);
  ASSERT_TRUE(reply) << error.message;
  EXPECT_EQ((*reply)["reason"], "timeout");
  EXPECT_FALSE(silent.Receive(rail::test::In(30s), &error));
  EXPECT_EQ(error.reason, "closed");

  // The first bytes of a valid hello, and then nothing more: dropped at the deadline too.
  Connection slow = Raw();
  std::string error_text;
  std::string nonce(kNonceBytes, '\x07');
  const std::string frame =
      *EncodeFrame(ToJson(Hello{"a", "b", nonce}), kDefaultMaxFrameBytes, &error_text);
  if (slow.SendRaw(frame.substr(0, 5), rail::test::In(30s), &error)) {
    auto last = slow.Receive(rail::test::In(30s), &error);
    if (last) {
      EXPECT_EQ((*last)["reason"], "timeout");
    }
  }
  EXPECT_TRUE(WaitForError("timeout", 2));
}

TEST_F(ResponderTest, ProbeRateIsLimitedPerPeer) {
  ResponderOptions options = Options();
  options.limits.probes_per_minute_per_peer = 1;
  options.limits.probe_burst_per_peer = 1;
  StartResponder(options);
  NetError error;
  auto client = Connect(ClientWith(secret_), &error);
  ASSERT_NE(client, nullptr) << error.message;
  RunFakeProbe(*client);
  EXPECT_FALSE(client->Request(ToJson(FakeSetup()), rail::test::In(2s), &error));
  EXPECT_EQ(error.reason, "rate") << error.message;
  EXPECT_NE(error.message.find("retry"), std::string::npos);
  // The wait comes as a hint too: one probe a minute, so most of a minute.
  ASSERT_TRUE(error.retry_after);
  EXPECT_GT(*error.retry_after, 30s);
  EXPECT_LE(*error.retry_after, 60s);
  EXPECT_TRUE(WaitForError("rate"));
}

TEST_F(ResponderTest, ProbesBeyondLimitsOrWithoutHandlerAreRefused) {
  ResponderOptions options = Options();
  options.limits.max_seconds_per_probe = 1;
  options.limits.max_bytes_per_probe = 4096;
  StartResponder(options);
  struct Case {
    ProbeSetup setup;
    const char* reason;
  };
  ProbeSetup too_long = FakeSetup(5);
  ProbeSetup too_big = FakeSetup();
  too_big.max_bytes = 1 << 20;
  ProbeSetup unknown = FakeSetup();
  unknown.kind = "ucx_teleport";
  ProbeSetup broken = FakeSetup();
  broken.rail = "broken";
  for (const Case& test : {Case{too_long, "limit"}, Case{too_big, "limit"},
                           Case{unknown, "unknown_kind"}, Case{broken, "setup"}}) {
    NetError error;
    auto client = Connect(ClientWith(secret_), &error);
    ASSERT_NE(client, nullptr) << error.message;
    EXPECT_FALSE(client->Request(ToJson(test.setup), rail::test::In(2s), &error));
    EXPECT_EQ(error.reason, test.reason) << error.message;
  }
  EXPECT_TRUE(WaitForError("limit", 2));
  EXPECT_EQ(Errors("unknown_kind"), 1u);
}

// A probe of 0.1 s with an hour of grace, on a clock that moves an hour at each reading: the
// responder gives up on the missing probe_done at once (on the real clock: an hour).
TEST_F(ResponderTest, MissingProbeDoneEndsTheProbe) {
  ResponderOptions options = Options();
  options.probe_grace = 1h;
  options.handshake_timeout = 10'000h;  // the handshake itself must not time out
  options.clock = &stepping_clock_;
  StartResponder(options);
  NetError error;
  auto client = Connect(ClientWith(secret_), &error);
  ASSERT_NE(client, nullptr) << error.message;
  ASSERT_TRUE(client->Request(ToJson(FakeSetup(0.1)), rail::test::In(30s), &error))
      << error.message;
  EXPECT_FALSE(client->Receive(rail::test::In(30s), &error));
  EXPECT_EQ(error.reason, "timeout") << error.message;
}

TEST_F(ResponderTest, StopIsPromptWithSessionsInEveryState) {
  ResponderOptions options = Options();
  options.handshake_timeout = 30s;
  options.probe_grace = 30s;
  StartResponder(options);
  NetError error;
  auto serving = Connect(ClientWith(secret_), &error);
  ASSERT_NE(serving, nullptr) << error.message;
  ASSERT_TRUE(serving->Request(ToJson(FakeSetup(20)), rail::test::In(2s), &error));
  auto idle = Connect(ClientWith(secret_), &error);
  ASSERT_NE(idle, nullptr) << error.message;
  Connection silent = Raw();
  ASSERT_TRUE(WaitFor([](const ResponderStats& s) { return s.active_sessions == 3; }));

  const auto start = Clock::now();
  responder_->Stop();
  EXPECT_LT(Clock::now() - start, 500ms);
  EXPECT_FALSE(serving->Receive(rail::test::In(1s), &error));
  EXPECT_EQ(error.reason, "shutdown") << error.message;
  EXPECT_EQ(responder_->Snapshot().active_sessions, 0u);
}

TEST_F(ResponderTest, StartFailsOnBadOptions) {
  ResponderOptions options = Options();
  options.limits.max_concurrent_sessions = 0;
  Responder bad_limits(options, FakeFactory());
  std::string error;
  EXPECT_FALSE(bad_limits.Start(&error));
  EXPECT_NE(error.find("max_concurrent_sessions"), std::string::npos);

  options = Options();
  options.listen_host = "not-an-address";
  Responder bad_address(options, FakeFactory());
  EXPECT_FALSE(bad_address.Start(&error));
  EXPECT_NE(error.find("not-an-address"), std::string::npos);
}

TEST_F(ResponderTest, ListensOnIpv6LoopbackWhenAvailable) {
  ResponderOptions options = Options();
  options.listen_host = "::1";
  responder_ = std::make_unique<Responder>(options, FakeFactory());
  std::string start_error;
  if (!responder_->Start(&start_error)) GTEST_SKIP() << "no IPv6 loopback: " << start_error;
  NetError error;
  auto client = PeerClient::Connect("[::1]:" + std::to_string(responder_->ListeningPort()), 2s,
                                    ClientWith(secret_), &error);
  ASSERT_NE(client, nullptr) << error.message;
  RunFakeProbe(*client);
  EXPECT_EQ(responder_->Snapshot().peers.count("::1"), 1u);
}

}  // namespace
}  // namespace rail::peer::testing
