// The notification filter on messages laid out as rtnetlink sends them, and the socket in a network
// namespace of its own (root) against changes made with iproute2.
#include "rail/nic/netdev_changes.h"

#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <vector>

namespace rail::nic {
namespace {

std::vector<std::byte> AddressMessage(std::uint16_t type, unsigned ifindex) {
  std::vector<std::byte> buffer(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* message = mnl_nlmsg_put_header(buffer.data());
  message->nlmsg_type = type;
  auto* address = static_cast<ifaddrmsg*>(mnl_nlmsg_put_extra_header(message, sizeof(ifaddrmsg)));
  address->ifa_family = AF_INET;
  address->ifa_index = ifindex;
  buffer.resize(message->nlmsg_len);
  return buffer;
}

std::vector<std::byte> LinkMessage(std::uint16_t type, int ifindex,
                                   std::map<std::uint16_t, std::uint32_t> attributes = {}) {
  std::vector<std::byte> buffer(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* message = mnl_nlmsg_put_header(buffer.data());
  message->nlmsg_type = type;
  auto* link = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(message, sizeof(ifinfomsg)));
  link->ifi_index = ifindex;
  mnl_attr_put_strz(message, IFLA_IFNAME, "eth2.100");
  for (const auto& [attribute, value] : attributes) mnl_attr_put_u32(message, attribute, value);
  buffer.resize(message->nlmsg_len);
  return buffer;
}

TEST(NetdevChangesTest, AddressesCountOnTheirOwnNetdevOnly) {
  const std::set<unsigned> followed = {4};
  EXPECT_TRUE(detail::NamesFollowed(AddressMessage(RTM_NEWADDR, 4), followed));
  EXPECT_TRUE(detail::NamesFollowed(AddressMessage(RTM_DELADDR, 4), followed));
  EXPECT_FALSE(detail::NamesFollowed(AddressMessage(RTM_NEWADDR, 5), followed));
}

TEST(NetdevChangesTest, ALinkCountsByItselfOrWhatItSitsOn) {
  const std::set<unsigned> followed = {4};
  EXPECT_TRUE(detail::NamesFollowed(LinkMessage(RTM_NEWLINK, 4), followed));
  EXPECT_TRUE(detail::NamesFollowed(LinkMessage(RTM_DELLINK, 4), followed));
  EXPECT_FALSE(detail::NamesFollowed(LinkMessage(RTM_NEWLINK, 9), followed));
  EXPECT_TRUE(detail::NamesFollowed(LinkMessage(RTM_NEWLINK, 9, {{IFLA_LINK, 4}}), followed))
      << "a VLAN or macvlan made over a followed netdev";
  EXPECT_TRUE(detail::NamesFollowed(LinkMessage(RTM_NEWLINK, 9, {{IFLA_MASTER, 4}}), followed))
      << "a netdev enslaved to a followed bond";
  EXPECT_FALSE(detail::NamesFollowed(LinkMessage(RTM_NEWLINK, 9, {{IFLA_MTU, 4}}), followed));
}

TEST(NetdevChangesTest, OtherMessagesDoNotCountAndBrokenOnesDo) {
  const std::set<unsigned> followed = {4};
  auto route = AddressMessage(RTM_NEWROUTE, 4);
  EXPECT_FALSE(detail::NamesFollowed(route, followed));
  auto truncated = LinkMessage(RTM_NEWLINK, 4);
  reinterpret_cast<nlmsghdr*>(truncated.data())->nlmsg_len = sizeof(nlmsghdr) + 2;
  truncated.resize(sizeof(nlmsghdr) + 4);
  EXPECT_TRUE(detail::NamesFollowed(truncated, followed)) << "what cannot be read may be a change";
}

// class/net/<name>/ifindex as this namespace has it, except for names in `wrong`.
class IfindexTree final : public sysfs::Filesystem {
 public:
  int ReadFile(std::string_view path, std::string* contents) const override {
    const std::string name(path.substr(10, path.rfind('/') - 10));  // class/net/<name>/ifindex
    const unsigned ifindex = if_nametoindex(name.c_str());
    if (ifindex == 0) return ENOENT;
    *contents = std::to_string(name == "x1" ? ifindex + 100 : ifindex) + "\n";
    return 0;
  }
  int ListDirectory(std::string_view, std::vector<std::string>*) const override { return ENOSYS; }
  bool IsDirectory(std::string_view) const override { return false; }
  bool Exists(std::string_view) const override { return false; }
};

bool Run(const char* command) {
  return std::system(command) == 0;
}

// Each step exits with its own status: the parent names the one that failed.
int ChangesInANamespace() {
  if (unshare(CLONE_NEWNET) != 0) return 2;
  if (!Run("ip link add x0 type veth peer name x1 && ip link set x0 up")) return 3;
  const IfindexTree tree;
  std::string error;
  auto changes = RtnetlinkChanges::Open(tree, &error);
  if (!changes) return 4;
  changes->Follow({"x0", "x1", "absent"});
  if (changes->Followed() != 1) return 5;  // x1's tree ifindex is not this namespace's
  if (changes->Changed()) return 6;
  if (!Run("ip addr add 10.9.9.9/24 dev x1") || changes->Changed()) return 7;
  if (!Run("ip addr add 10.8.8.8/24 dev x0") || !changes->Changed()) return 8;
  if (changes->Changed()) return 9;  // drained
  if (!Run("ip addr del 10.8.8.8/24 dev x0") || !changes->Changed()) return 10;
  if (!Run("ip link set x0 down") || !changes->Changed()) return 11;
  // A macvlan over x0 (IFLA_LINK) where the module is there; the filter test covers the rest.
  if (Run("ip link add m0 link x0 type macvlan 2>/dev/null") && !changes->Changed()) return 12;
  return 0;
}

TEST(NetdevChangesTest, TheSocketSeesWhatIproute2DoesToAFollowedNetdev) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: changes netdevs in a network namespace";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(ChangesInANamespace());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the step that failed (see ChangesInANamespace)";
}

}  // namespace
}  // namespace rail::nic
