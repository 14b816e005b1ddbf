#include "rail/peer/allow_list.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include "rail/peer/limits.h"

namespace rail::peer {
namespace {

NetworkAllowList List(std::initializer_list<const char*> texts) {
  std::vector<Network> networks;
  for (const char* text : texts) {
    std::string error;
    auto network = ParseNetwork(text, &error);
    EXPECT_TRUE(network) << text << ": " << error;
    if (network) networks.push_back(*network);
  }
  return NetworkAllowList(std::move(networks));
}

TEST(AllowList, ParsesIpv4AndIpv6Networks) {
  std::string error;
  auto v4 = ParseNetwork("10.1.0.0/16", &error);
  ASSERT_TRUE(v4) << error;
  EXPECT_FALSE(v4->ipv6);
  EXPECT_EQ(v4->prefix_length, 16u);
  auto host = ParseNetwork("192.168.1.7", &error);
  ASSERT_TRUE(host) << error;
  EXPECT_EQ(host->prefix_length, 32u);
  auto v6 = ParseNetwork("fd00:1::/32", &error);
  ASSERT_TRUE(v6) << error;
  EXPECT_TRUE(v6->ipv6);
  EXPECT_EQ(v6->prefix_length, 32u);
  EXPECT_EQ(ParseNetwork("::1", &error)->prefix_length, 128u);
  EXPECT_EQ(ParseNetwork("0.0.0.0/0", &error)->prefix_length, 0u);
}

TEST(AllowList, RejectsBadNetworks) {
  for (const char* text :
       {"", "10.0.0", "10.0.0.0/33", "fd00::/129", "10.0.0.0/", "10.0.0.0/x", "10.0.0.0/8/8",
        "host.example/24", "10.0.0.1/8", "fd00::1/64", "10.0.0.0/-1"}) {
    std::string error;
    EXPECT_FALSE(ParseNetwork(text, &error)) << text;
    EXPECT_FALSE(error.empty()) << text;
  }
  std::string error;
  ParseNetwork("10.0.0.1/8", &error);
  EXPECT_NE(error.find("host bits"), std::string::npos) << error;
}

TEST(AllowList, MatchesAddressesOfTheirFamily) {
  const NetworkAllowList list = List({"10.1.0.0/16", "192.168.7.128/25", "fd00::/8"});
  EXPECT_TRUE(list.Allows("10.1.200.3"));
  EXPECT_FALSE(list.Allows("10.2.0.1"));
  EXPECT_TRUE(list.Allows("192.168.7.200"));
  EXPECT_FALSE(list.Allows("192.168.7.127"));  // just below the /25
  EXPECT_TRUE(list.Allows("fd12:3456::1"));
  EXPECT_FALSE(list.Allows("fe80::1"));
  EXPECT_TRUE(list.Allows("::ffff:10.1.0.9"));  // IPv4-mapped: the IPv4 rules apply
  EXPECT_FALSE(list.Allows("::ffff:10.9.0.9"));
  EXPECT_FALSE(list.Allows("not an address"));
  EXPECT_TRUE(NetworkAllowList().Allows("203.0.113.9"));  // empty: everybody
}

TEST(AllowList, MatchesSocketAddresses) {
  const NetworkAllowList list = List({"127.0.0.2/32", "::1/128"});
  sockaddr_storage peer{};
  auto& v4 = reinterpret_cast<sockaddr_in&>(peer);
  v4.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.2", &v4.sin_addr);
  EXPECT_TRUE(list.Allows(peer));
  inet_pton(AF_INET, "127.0.0.1", &v4.sin_addr);
  EXPECT_FALSE(list.Allows(peer));
  peer = {};
  auto& v6 = reinterpret_cast<sockaddr_in6&>(peer);
  v6.sin6_family = AF_INET6;
  inet_pton(AF_INET6, "::1", &v6.sin6_addr);
  EXPECT_TRUE(list.Allows(peer));
  inet_pton(AF_INET6, "::ffff:127.0.0.2", &v6.sin6_addr);  // a dual-stack listener's view
  EXPECT_TRUE(list.Allows(peer));
  inet_pton(AF_INET6, "::ffff:127.0.0.3", &v6.sin6_addr);
  EXPECT_FALSE(list.Allows(peer));
  peer = {};
  peer.ss_family = AF_UNIX;
  EXPECT_FALSE(list.Allows(peer));
}

TEST(SessionSlots, CapsEachAddressAndForgetsIdleOnes) {
  SessionSlots slots(4, 2);
  SessionSlots::Refusal refusal = SessionSlots::Refusal::kNone;
  {
    auto a1 = slots.TryAcquire("10.0.0.1", &refusal);
    auto a2 = slots.TryAcquire("10.0.0.1", &refusal);
    ASSERT_TRUE(a1 && a2);
    EXPECT_FALSE(slots.TryAcquire("10.0.0.1", &refusal));
    EXPECT_EQ(refusal, SessionSlots::Refusal::kPerAddress);
    auto b1 = slots.TryAcquire("10.0.0.2", &refusal);
    auto c1 = slots.TryAcquire("10.0.0.3", &refusal);
    ASSERT_TRUE(b1 && c1);
    EXPECT_EQ(refusal, SessionSlots::Refusal::kNone);
    EXPECT_FALSE(slots.TryAcquire("10.0.0.4", &refusal));
    EXPECT_EQ(refusal, SessionSlots::Refusal::kTotal);
    EXPECT_EQ(slots.in_use(), 4u);
    EXPECT_EQ(slots.addresses(), 3u);
  }
  EXPECT_EQ(slots.in_use(), 0u);
  EXPECT_EQ(slots.addresses(), 0u);  // nothing is remembered about addresses without a slot
  SessionSlots uncapped(3, 0);
  auto x = uncapped.TryAcquire("10.0.0.1");
  auto y = uncapped.TryAcquire("10.0.0.1");
  auto z = uncapped.TryAcquire("10.0.0.1");
  EXPECT_TRUE(x && y && z);
}

}  // namespace
}  // namespace rail::peer
