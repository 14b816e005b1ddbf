// Asking lldpd where none runs: no socket, and a socket left behind by a stopped lldpd, both read
// as not running, with nothing listed. The lab asks a real lldpd (tests/e2e/lab_lldp_test.py).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "rail/base/unique_fd.h"
#include "rail/lldp/neighbors.h"

namespace rail::lldp {
namespace {

class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "lldp_test.XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~ScratchFolder() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(LldpdNeighborSourceTest, NoSocketIsNoLldpd) {
  const ScratchFolder folder;
  const std::string socket = folder.path() + "/lldpd.socket";
  const auto read = LldpdNeighborSource(socket).Read();
  EXPECT_EQ(read.state, DaemonState::kNotRunning);
  EXPECT_EQ(read.socket_path, socket);
  EXPECT_NE(read.error.find(socket), std::string::npos) << read.error;
  EXPECT_TRUE(read.interfaces.empty());
}

// A Unix socket that was bound and closed stays as a file nobody listens on: ECONNREFUSED.
TEST(LldpdNeighborSourceTest, SocketLeftBehindIsNoLldpd) {
  const ScratchFolder folder;
  const std::string socket = folder.path() + "/lldpd.socket";
  {
    const base::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM, 0));
    ASSERT_TRUE(fd);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, socket.data(), socket.size());
    ASSERT_EQ(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  }
  ASSERT_TRUE(std::filesystem::exists(socket));
  const auto read = LldpdNeighborSource(socket).Read();
  EXPECT_EQ(read.state, DaemonState::kNotRunning) << read.error;
  EXPECT_TRUE(read.interfaces.empty());
}

TEST(LldpdNeighborSourceTest, PathTooLongForAUnixSocketIsAnError) {
  const auto read = LldpdNeighborSource("/" + std::string(200, 'x')).Read();
  EXPECT_EQ(read.state, DaemonState::kError);
}

TEST(LldpdNeighborSourceTest, EmptyPathMeansLldpdsDefault) {
  EXPECT_FALSE(DefaultSocketPath().empty());
  // Whatever this machine runs, the default is where it is asked.
  EXPECT_EQ(LldpdNeighborSource("").Read().socket_path, DefaultSocketPath());
}

TEST(LldpdNeighborSourceTest, StateNames) {
  EXPECT_STREQ(DaemonStateName(DaemonState::kAnswered), "answered");
  EXPECT_STREQ(DaemonStateName(DaemonState::kNotRunning), "not_running");
  EXPECT_STREQ(DaemonStateName(DaemonState::kError), "error");
}

}  // namespace
}  // namespace rail::lldp
