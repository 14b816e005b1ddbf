#include "rail/peer/connection.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "rail/peer/session_messages.h"
#include "support/deadline.h"
#include "support/fake_clock.h"

namespace rail::peer {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A loopback port that nothing listens on: bound, then released.
std::uint16_t UnusedPort() {
  base::UniqueFd fd(socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length);
  return ntohs(address.sin_port);
}

// Two connected Connections over a socketpair.
std::pair<Connection, Connection> ConnectedPair(std::size_t max_frame_bytes = 1024) {
  int fds[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  return {Connection(base::UniqueFd(fds[0]), max_frame_bytes),
          Connection(base::UniqueFd(fds[1]), max_frame_bytes)};
}

TEST(HostPort, ParsesNamesAddressesAndPorts) {
  std::string error;
  const auto plain = ParseHostPort("node7", 9841, &error);
  ASSERT_TRUE(plain) << error;
  EXPECT_EQ(plain->host, "node7");
  EXPECT_EQ(plain->port, 9841);

  const auto v4 = ParseHostPort("10.0.0.2:1234", 9841, &error);
  ASSERT_TRUE(v4) << error;
  EXPECT_EQ(v4->host, "10.0.0.2");
  EXPECT_EQ(v4->port, 1234);

  const auto v6 = ParseHostPort("[::1]:9841", 1, &error);
  ASSERT_TRUE(v6) << error;
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 9841);

  const auto bare_v6 = ParseHostPort("fe80::1", 77, &error);
  ASSERT_TRUE(bare_v6) << error;
  EXPECT_EQ(bare_v6->host, "fe80::1");
  EXPECT_EQ(bare_v6->port, 77);

  const auto bracketed = ParseHostPort("[::1]", 5, &error);
  ASSERT_TRUE(bracketed) << error;
  EXPECT_EQ(bracketed->port, 5);
}

TEST(HostPort, RejectsBadInput) {
  std::string error;
  for (const char* text :
       {"", "host:", "host:0", "host:65536", "host:12ab", "[::1", "[::1]x", ":9841"}) {
    EXPECT_FALSE(ParseHostPort(text, 9841, &error)) << text;
    EXPECT_FALSE(error.empty()) << text;
  }
  EXPECT_EQ(FormatHostPort("::1", 9841), "[::1]:9841");
  EXPECT_EQ(FormatHostPort("10.0.0.1", 9841), "10.0.0.1:9841");
}

TEST(Connect, NothingListeningIsRefused) {
  NetError error;
  EXPECT_FALSE(ConnectTcp("127.0.0.1", UnusedPort(), rail::test::In(1s), {}, &error));
  EXPECT_EQ(error.reason, "refused") << error.message;
}

TEST(Connect, UnknownHostIsAResolveError) {
  NetError error;
  EXPECT_FALSE(ConnectTcp("no-such-host.invalid", 9841, rail::test::In(1s), {}, &error));
  EXPECT_EQ(error.reason, "resolve") << error.message;
}

TEST(Connect, BadLocalAddressIsABindError) {
  NetError error;
  ConnectOptions options;
  options.local_address = "not-an-address";
  EXPECT_FALSE(ConnectTcp("127.0.0.1", 9841, rail::test::In(1s), options, &error));
  EXPECT_EQ(error.reason, "bind") << error.message;
}

TEST(Connect, BindsTheLocalAddressAndReportsAddresses) {
  base::UniqueFd listener(socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(listener.get(), 1), 0);
  socklen_t length = sizeof(address);
  getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length);

  NetError error;
  ConnectOptions options;
  options.local_address = "127.0.0.1";
  const auto connected =
      ConnectTcp("127.0.0.1", ntohs(address.sin_port), rail::test::In(1s), options, &error);
  ASSERT_TRUE(connected) << error.message;
  EXPECT_EQ(PeerAddress(connected->fd.get()), "127.0.0.1");
  EXPECT_EQ(LocalAddress(connected->fd.get()), "127.0.0.1");
}

TEST(Connection, CarriesMessagesBothWays) {
  auto [left, right] = ConnectedPair();
  NetError error;
  const json message{{"v", 1}, {"type", "probe_done"}, {"measured", {{"bytes", 5}}}};
  ASSERT_TRUE(left.Send(message, rail::test::In(1s), &error)) << error.message;
  ASSERT_TRUE(left.Send(message, rail::test::In(1s), &error)) << error.message;
  for (int i = 0; i < 2; ++i) {  // two frames in one read come out one by one
    const auto received = right.Receive(rail::test::In(1s), &error);
    ASSERT_TRUE(received) << error.message;
    EXPECT_EQ(*received, message);
  }
}

// An hour's deadline on a clock that moves an hour at each reading: the wait ends at once, as it
// can only when poll() is given what is left on the deadline's own clock.
TEST(Connection, ReceiveEndsAtTheDeadlineOfItsClock) {
  auto [left, right] = ConnectedPair();
  NetError error;
  const rail::test::SteppingClock clock(1h);
  EXPECT_FALSE(right.Receive(base::Deadline::After(clock, 1h), &error));
  EXPECT_EQ(error.reason, "timeout");
}

TEST(Connection, CancelFdEndsAWait) {
  auto [left, right] = ConnectedPair();
  int cancel[2];
  ASSERT_EQ(pipe(cancel), 0);
  base::UniqueFd cancel_read(cancel[0]);
  base::UniqueFd cancel_write(cancel[1]);
  right.set_cancel_fd(cancel_read.get());
  std::thread canceller([&] {
    std::this_thread::sleep_for(50ms);
    ASSERT_EQ(write(cancel_write.get(), "x", 1), 1);
  });
  NetError error;
  EXPECT_FALSE(right.Receive(rail::test::In(10s), &error));
  EXPECT_EQ(error.reason, "cancelled");
  canceller.join();
}

TEST(Connection, MapsDecoderErrorsToReasons) {
  struct Case {
    std::string bytes;
    const char* reason;
  };
  const std::string garbage = "not json";
  const std::string wrong_version = R"({"v":99,"type":"hello"})";
  const auto frame = [](const std::string& payload) {
    std::string out(4, '\0');
    out[3] = static_cast<char>(payload.size());
    return out + payload;
  };
  for (const Case& test :
       {Case{frame(garbage), "malformed"}, Case{frame(R"({"v":1})"), "malformed"},
        Case{std::string("\x7f\xff\xff\xff", 4), "oversized"},
        Case{frame(wrong_version), "version"}}) {
    auto [left, right] = ConnectedPair();
    NetError error;
    ASSERT_TRUE(left.SendRaw(test.bytes, rail::test::In(1s), &error));
    json version_message;
    EXPECT_FALSE(right.Receive(rail::test::In(1s), &error, &version_message));
    EXPECT_EQ(error.reason, test.reason) << error.message;
    if (std::string(test.reason) == "version") {
      EXPECT_EQ(MessageType(version_message), "hello");
    }
  }
}

TEST(Connection, PeerCloseIsReported) {
  auto [left, right] = ConnectedPair();
  NetError error;
  ASSERT_TRUE(left.SendRaw(std::string("\0\0", 2), rail::test::In(1s), &error));
  left.Close();
  EXPECT_FALSE(right.Receive(rail::test::In(1s), &error));
  EXPECT_EQ(error.reason, "closed");
  EXPECT_NE(error.message.find("middle of a frame"), std::string::npos);
}

TEST(Connection, RefusesToSendOversizedMessages) {
  auto [left, right] = ConnectedPair(256);
  NetError error;
  EXPECT_FALSE(
      left.Send(json{{"v", 1}, {"type", std::string(300, 'x')}}, rail::test::In(1s), &error));
  EXPECT_EQ(error.reason, "oversized");
}

TEST(SessionMessages, RoundTripAndReasonTokens) {
  std::string error;
  ProbeSetupReply reply{{"1.0", "1.13.1"}, json{{"tcp_port", 5201}}};
  ProbeSetupReply decoded;
  ASSERT_TRUE(FromJson(ToJson(reply), &decoded, &error)) << error;
  EXPECT_EQ(decoded.versions.ucx_version, "1.13.1");
  EXPECT_EQ(decoded.setup["tcp_port"], 5201);

  Welcome welcome;
  EXPECT_FALSE(FromJson(ToJson(reply), &welcome, &error));
  EXPECT_NE(error.find("welcome"), std::string::npos);

  EXPECT_EQ(KnownReason("auth"), "auth");
  EXPECT_EQ(KnownReason("made_up_label_from_a_peer"), "peer_error");
}

}  // namespace
}  // namespace rail::peer
