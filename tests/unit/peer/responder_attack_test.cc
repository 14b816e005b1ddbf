// The responder under attack (issue 5): floods, half-open and slow connections, strangers outside
// the allowed networks. Legitimate peers connect from 127.0.0.2, attackers from 127.0.0.1 (both
// loopback), so that per-address limits tell them apart.
#include <sys/resource.h>

#include <vector>

#include "rail/peer/responder.h"
#include "responder_fixture.h"
#include "support/deadline.h"

namespace rail::peer::testing {
namespace {

constexpr const char* kLegitimate = "127.0.0.2";

class ResponderAttackTest : public ResponderTest {
 protected:
  void SetUp() override {
    // A flood holds hundreds of client sockets in this process.
    rlimit files{};
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
      files.rlim_cur = files.rlim_max;
      setrlimit(RLIMIT_NOFILE, &files);
    }
  }

  ClientOptions LegitimateClient() {
    ClientOptions options = ClientWith(secret_);
    options.connect.local_address = kLegitimate;
    return options;
  }

  // A connection that says nothing (half-open, from the responder's point of view).
  std::optional<Connection> Silent(const std::string& from = "127.0.0.1") {
    NetError error;
    ConnectOptions connect;
    connect.local_address = from;
    return Connection::Connect("127.0.0.1", responder_->ListeningPort(), rail::test::In(2s),
                               connect, 64 * 1024, &error);
  }

  static std::string ReplyReason(Connection& connection,
                                 std::chrono::milliseconds wait = std::chrono::seconds(3)) {
    NetError error;
    auto reply = connection.Receive(rail::test::In(wait), &error);
    return reply ? reply->value("reason", std::string("?")) : "no reply: " + error.reason;
  }
};

TEST_F(ResponderAttackTest, OneAddressCannotTakeEverySessionSlot) {
  ResponderOptions options = Options();
  options.limits.max_concurrent_sessions = 8;
  options.limits.max_connections_per_ip = 2;
  options.handshake_timeout = 5s;  // the silent ones stay for the whole test
  StartResponder(options);

  std::vector<Connection> flood;
  for (int i = 0; i < 20; ++i) {
    auto connection = Silent();
    ASSERT_TRUE(connection);
    flood.push_back(std::move(*connection));
  }
  ASSERT_TRUE(WaitFor([](const ResponderStats& s) { return s.connections_total == 20; }));
  EXPECT_TRUE(WaitForError("ip_limit", 18));
  EXPECT_EQ(Errors("ip_limit"), 18u);
  // The refused ones were told why; the two admitted ones are still waiting for a hello.
  int refused = 0;
  for (std::size_t i = 2; i < flood.size(); ++i) refused += ReplyReason(flood[i]) == "ip_limit";
  EXPECT_EQ(refused, 18);
  ResponderStats stats = responder_->Snapshot();
  EXPECT_EQ(stats.active_sessions, 2u);
  EXPECT_EQ(stats.active_sources, 1u);

  NetError error;
  auto same_address = Connect(ClientWith(secret_), &error);
  EXPECT_EQ(same_address, nullptr);
  EXPECT_EQ(error.reason, "ip_limit") << error.message;

  auto legitimate = Connect(LegitimateClient(), &error);
  ASSERT_NE(legitimate, nullptr) << error.reason << ": " << error.message;
  RunFakeProbe(*legitimate);
  EXPECT_EQ(responder_->Snapshot().active_sources, 2u);
}

TEST_F(ResponderAttackTest, BurstOf500ConnectionsIsBoundedAndLeavesNothingBehind) {
  ResponderOptions options = Options();
  options.handshake_timeout = 5s;
  StartResponder(options);  // default limits: 16 sessions, 8 per address
  const Limits limits;

  for (int round = 0; round < 2; ++round) {
    std::vector<Connection> flood;
    flood.reserve(500);
    for (int i = 0; i < 500; ++i) {
      auto connection = Silent();
      ASSERT_TRUE(connection) << "connection " << i;
      flood.push_back(std::move(*connection));
    }
    // Each earlier round also had one legitimate connection.
    const std::uint64_t expected_total = 501u * static_cast<std::uint64_t>(round) + 500u;
    ASSERT_TRUE(WaitFor([&](const ResponderStats& s) {
      return s.connections_total == expected_total;
    })) << "round "
        << round << ": " << responder_->Snapshot().connections_total << " accepted, "
        << Errors("ip_limit") << " refused (ip_limit), " << responder_->Snapshot().active_sessions
        << " active";
    const ResponderStats during = responder_->Snapshot();
    EXPECT_EQ(during.active_sessions, limits.max_connections_per_ip);
    EXPECT_EQ(Errors("ip_limit"), (500u - limits.max_connections_per_ip) * (round + 1u));

    // A legitimate peer is served in the middle of it.
    NetError error;
    auto legitimate = Connect(LegitimateClient(), &error);
    ASSERT_NE(legitimate, nullptr) << error.reason << ": " << error.message;
    RunFakeProbe(*legitimate);
    legitimate.reset();

    flood.clear();  // the attacker goes away: every slot and every per-address entry is freed
    ASSERT_TRUE(WaitFor(
        [](const ResponderStats& s) { return s.active_sessions == 0 && s.active_sources == 0; }));
  }
  EXPECT_EQ(responder_->Snapshot().probes_total, 2u);
}

TEST_F(ResponderAttackTest, SlowClientsDoNotDelayOthers) {
  ResponderOptions options = Options();
  options.handshake_timeout = 3s;
  StartResponder(options);
  std::string error_text;
  const std::string hello = *EncodeFrame(ToJson(Hello{"a", "b", std::string(kNonceBytes, '\x09')}),
                                         kDefaultMaxFrameBytes, &error_text);
  std::vector<Connection> slow;
  for (int i = 0; i < 4; ++i) {
    auto connection = Silent();
    ASSERT_TRUE(connection);
    slow.push_back(std::move(*connection));
  }
  NetError error;
  // Each slow client has sent a few bytes of its hello and will send no more for now.
  for (auto& connection : slow) {
    ASSERT_TRUE(connection.SendRaw(hello.substr(0, 3), rail::test::In(1s), &error));
  }
  ASSERT_TRUE(WaitFor([](const ResponderStats& s) { return s.active_sessions == 4; }));
  auto legitimate = Connect(LegitimateClient(), &error);
  ASSERT_NE(legitimate, nullptr) << error.reason << ": " << error.message;
  RunFakeProbe(*legitimate);
  EXPECT_EQ(responder_->Snapshot().active_sessions, 5u);  // the slow ones are still there
  legitimate.reset();
  // ... until the handshake deadline drops them, each with a reason. The wait is longer than
  // the deadline: the first slow client starts waiting only ~3 s before it, and the responder
  // notices a passed deadline at its next read slice (1 in ~25 runs the reply came just after).
  for (auto& connection : slow) EXPECT_EQ(ReplyReason(connection, 6s), "timeout");
  EXPECT_TRUE(WaitForError("timeout", 4));
}

TEST_F(ResponderAttackTest, StrangersOutsideAllowedNetworksAreClosedAtAccept) {
  ResponderOptions options = Options();
  std::string error_text;
  options.allowed_networks.push_back(*ParseNetwork("127.0.0.2/32", &error_text));
  options.allowed_networks.push_back(*ParseNetwork("fd00::/8", &error_text));
  StartResponder(options);

  auto stranger = Silent("127.0.0.1");
  ASSERT_TRUE(stranger);
  NetError error;
  EXPECT_FALSE(stranger->Receive(rail::test::In(3s), &error));
  EXPECT_EQ(error.reason, "closed") << "a stranger gets no reply at all";
  EXPECT_TRUE(WaitForError("not_allowed"));
  EXPECT_EQ(responder_->Snapshot().sessions_total, 0u);

  EXPECT_EQ(Connect(ClientWith(secret_), &error), nullptr);  // a real client from 127.0.0.1
  EXPECT_EQ(Errors("not_allowed"), 2u);

  auto legitimate = Connect(LegitimateClient(), &error);
  ASSERT_NE(legitimate, nullptr) << error.reason << ": " << error.message;
  RunFakeProbe(*legitimate);
  EXPECT_EQ(Errors("not_allowed"), 2u);
}

TEST_F(ResponderAttackTest, AllowedNetworksApplyToIpv6Peers) {
  for (const char* allowed : {"::1/128", "fd00::/8"}) {
    ResponderOptions options = Options();
    options.listen_host = "::1";
    std::string error_text;
    options.allowed_networks.push_back(*ParseNetwork(allowed, &error_text));
    responder_ = std::make_unique<Responder>(std::move(options), FakeFactory());
    if (!responder_->Start(&error_text)) GTEST_SKIP() << "no IPv6 loopback: " << error_text;
    NetError error;
    auto client = PeerClient::Connect("[::1]:" + std::to_string(responder_->ListeningPort()), 2s,
                                      ClientWith(secret_), &error);
    if (std::string(allowed) == "::1/128") {
      ASSERT_NE(client, nullptr) << error.reason << ": " << error.message;
      RunFakeProbe(*client);
      EXPECT_EQ(Errors("not_allowed"), 0u);
    } else {
      EXPECT_EQ(client, nullptr);
      EXPECT_TRUE(WaitForError("not_allowed"));
    }
    client.reset();
    responder_.reset();
  }
}

}  // namespace
}  // namespace rail::peer::testing
