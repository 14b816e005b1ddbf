// duplicate_subnet with injected interface addresses.
#include <gmock/gmock.h>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;

TEST(DuplicateSubnetTest, SubnetOnAnotherInterfaceFails) {
  // The DGX Spark pattern: both PCIe functions of one port got addresses in the same /24.
  Host host("spark-dual-rail");
  host.addresses = {{"lo", "127.0.0.1", 8},
                    {"enP7s7", "10.0.0.5", 24},
                    {"enp1s0f0np0", "192.168.100.11", 24},
                    {"enp1s0f1np1", "192.168.200.11", 24},
                    {"enP2p1s0f0np0", "192.168.100.15", 24}};
  const auto results = host.Evaluate();
  const auto first = Find(results, "duplicate_subnet", "rocep1s0f0:1");
  EXPECT_FALSE(first->ok);
  EXPECT_EQ(first->reason,
            "subnet also configured on another interface: enP2p1s0f0np0 (192.168.100.15/24) "
            "overlaps 192.168.100.0/24 of enp1s0f0np0");
  const auto second = Find(results, "duplicate_subnet", "roceP2p1s0f0:1");
  EXPECT_FALSE(second->ok);
  EXPECT_THAT(second->reason, HasSubstr("enp1s0f0np0 (192.168.100.11/24)"));
  EXPECT_TRUE(Find(results, "duplicate_subnet", "rocep1s0f1:1")->ok);
  // No address on its netdev: no subnet, no verdict.
  EXPECT_FALSE(Find(results, "duplicate_subnet", "roceP2p1s0f1:1"));
}

TEST(DuplicateSubnetTest, OverlapIsJudgedOnTheShorterPrefix) {
  Host host("spark-dual-rail");
  host.addresses = {{"enp1s0f0np0", "192.168.100.11", 24}, {"docker0", "192.168.0.1", 16}};
  const auto verdict = Find(host.Evaluate(), "duplicate_subnet", "rocep1s0f0:1");
  EXPECT_FALSE(verdict->ok);
  EXPECT_THAT(verdict->reason, HasSubstr("docker0 (192.168.0.1/16)"));
}

TEST(DuplicateSubnetTest, DistinctSubnetsPass) {
  Host host("spark-dual-rail");
  host.addresses = {{"enp1s0f0np0", "192.168.100.11", 24},
                    {"enp1s0f1np1", "192.168.200.11", 24},
                    {"enP7s7", "192.168.101.7", 24}};
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "duplicate_subnet", "rocep1s0f0:1")->ok);
  EXPECT_TRUE(Find(results, "duplicate_subnet", "rocep1s0f1:1")->ok);
}

}  // namespace
}  // namespace rail::health::test
