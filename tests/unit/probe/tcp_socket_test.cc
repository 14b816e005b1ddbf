// tcp_socket.h's SendAll, on a Unix socket pair with slice timeouts.
#include "probe/tcp_socket.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

namespace rail::probe {
namespace {

using namespace std::chrono_literals;

struct SocketPair {
  SocketPair() {
    int fds[2] = {-1, -1};
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    sender = base::UniqueFd(fds[0]);
    receiver = base::UniqueFd(fds[1]);
    EXPECT_TRUE(detail::MakeBlockingWithTimeouts(sender.get(), 10ms));
  }
  base::UniqueFd sender;
  base::UniqueFd receiver;
};

TEST(TcpSendAll, SendsEverything) {
  SocketPair pair;
  const std::string message(1000, 'm');
  EXPECT_EQ(detail::SendAll(pair.sender.get(), message.data(), message.size(), [] { return true; }),
            detail::SendEnd::kSent);
  std::string received(message.size(), '\0');
  ASSERT_EQ(recv(pair.receiver.get(), received.data(), received.size(), MSG_WAITALL),
            static_cast<ssize_t>(message.size()));
  EXPECT_EQ(received, message);
}

TEST(TcpSendAll, AsksWhetherToGoOnWhileThePeerReadsNothing) {
  SocketPair pair;
  const std::vector<char> data(64 << 20, 'x');  // more than any socket buffer holds
  int asked = 0;
  const auto keep_trying = [&asked] { return ++asked < 3; };
  EXPECT_EQ(detail::SendAll(pair.sender.get(), data.data(), data.size(), keep_trying),
            detail::SendEnd::kStopped);
  EXPECT_EQ(asked, 3);
}

TEST(TcpSendAll, FailsWhenThePeerIsGone) {
  SocketPair pair;
  pair.receiver = base::UniqueFd();
  const std::string message(100, 'm');
  EXPECT_EQ(detail::SendAll(pair.sender.get(), message.data(), message.size(), [] { return true; }),
            detail::SendEnd::kFailed);
  EXPECT_EQ(errno, EPIPE);
}

}  // namespace
}  // namespace rail::probe
