// roce_gid: RoCE v2 GIDs carrying the rail netdev's address, and GIDs pointing at a bond.
#include <gmock/gmock.h>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(RoceGidTest, GidCarryingTheNetdevAddressPasses) {
  Host host("spark-dual-rail");
  host.addresses = {{"enp1s0f0np0", "192.168.100.11", 24}, {"enp1s0f1np1", "192.168.200.11", 24}};
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "roce_gid", "rocep1s0f0:1")->ok);
  EXPECT_TRUE(Find(results, "roce_gid", "rocep1s0f1:1")->ok);
}

TEST(RoceGidTest, NetdevAddressWithoutGidFails) {
  Host host("spark-dual-rail");
  // The netdev was renumbered and the GID table still carries the old address.
  host.addresses = {{"enp1s0f0np0", "192.168.100.99", 24}};
  const auto verdict = Find(host.Evaluate(), "roce_gid", "rocep1s0f0:1");
  EXPECT_FALSE(verdict->ok);
  EXPECT_EQ(verdict->reason,
            "no RoCE v2 GID of rocep1s0f0 port 1 carries 192.168.100.99 (the IPv4 address of "
            "enp1s0f0np0); its RoCE v2 IPv4 GIDs carry 192.168.100.11");
}

TEST(RoceGidTest, PortWithoutIpv4GidFails) {
  // roceP2p1s0f1's netdev has no address: only link-local GIDs, nothing RoCE v2 can route to.
  const Host host("spark-dual-rail");
  const auto verdict = Find(host.Evaluate(), "roce_gid", "roceP2p1s0f1:1");
  EXPECT_FALSE(verdict->ok);
  EXPECT_THAT(verdict->reason, HasSubstr("no IPv4 address on netdev enP2p1s0f1np1 and no RoCE v2 "
                                         "IPv4 GID on roceP2p1s0f1 port 1"));
}

TEST(RoceGidTest, WithoutInterfaceAddressesTheRailAddressIsTheReference) {
  const Host host("spark-dual-rail");  // no addresses injected: the GID-derived rail.ipv4
  EXPECT_TRUE(Find(host.Evaluate(), "roce_gid", "rocep1s0f0:1")->ok);
}

TEST(RoceGidTest, GidsOnABondFail) {
  Host host("bonded-roce");
  host.addresses = {{"bond0", "10.10.0.11", 24}};
  const auto results = host.Evaluate();
  ASSERT_EQ(host.rails.size(), 2u);
  for (const auto& rail : host.rails) {
    const auto verdict = Find(results, "roce_gid", rail.name);
    ASSERT_TRUE(verdict) << rail.name;
    EXPECT_FALSE(verdict->ok);
    EXPECT_THAT(verdict->reason, HasSubstr("name the bond bond0 (gid_attrs/ndevs)"));
    EXPECT_THAT(verdict->reason, HasSubstr("break RDMA memory registration"));
  }
}

TEST(RoceGidTest, InfinibandPortsHaveNoVerdict) {
  const Host host("quirks");
  EXPECT_EQ(test::Count(host.Evaluate(), "roce_gid"), 0u);
}

}  // namespace
}  // namespace rail::health::test
