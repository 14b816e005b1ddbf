// One remedy and one summary per check token, with the rail's names filled in.
#include "rail/health/remedies.h"

#include <gmock/gmock.h>

namespace rail::health {
namespace {

inventory::Rail Rail0() {
  inventory::Rail rail;
  rail.name = "rail0";
  rail.device = "mlx5_5";
  rail.port = 1;
  rail.netdev = "ens5np0";
  return rail;
}

TEST(RemediesTest, EveryCheckTokenHasARemedyAndASummary) {
  for (const auto& token : CheckTokens()) {
    const CheckResult verdict{token, "", "", false, "reason"};
    EXPECT_FALSE(Remedy(verdict, {}).empty()) << token;
    EXPECT_FALSE(CheckSummary(token).empty()) << token;
  }
  EXPECT_EQ(CheckTokens().size(), 25u);
  EXPECT_EQ(Remedy({"no_such_check", "", "", false, "x"}, {}), "");
}

TEST(RemediesTest, FillsTheRailsNamesAndPlaceholdersOtherwise) {
  const CheckResult mtu{"mtu", "rail0", "", false, "MTU 1500"};
  EXPECT_EQ(Remedy(mtu, {Rail0()}), "ip link set dev ens5np0 mtu 9000");
  EXPECT_EQ(Remedy(mtu, {}), "ip link set dev <netdev> mtu 9000");
  EXPECT_THAT(Remedy({"transport_fallback", "rail0", "b", false, "tcp"}, {Rail0()}),
              ::testing::HasSubstr("UCX_NET_DEVICES=mlx5_5:1"));
}

TEST(RemediesTest, PcieLinkNamesThePciAddressFromTheTopology) {
  inventory::PcieTopology topology;
  inventory::RdmaPciDevice device;
  device.device = "mlx5_5";
  device.pci_bus_id = "0000:86:00.0";
  topology.devices = {device};
  const CheckResult verdict{"pcie_link", "rail0", "", false, "x8"};
  EXPECT_THAT(Remedy(verdict, {Rail0()}, &topology),
              ::testing::StartsWith("lspci -vv -s 0000:86:00.0 |"));
  EXPECT_THAT(Remedy(verdict, {Rail0()}), ::testing::StartsWith("lspci -vv -s <pci address> |"));
}

// ib_write_bw on RoCE needs the RoCE v2 GID's index (-x): perftest's default GID 0 is link-local.
TEST(RemediesTest, IbWriteBwNamesTheRoceV2GidIndex) {
  inventory::Rail roce = Rail0();
  roce.link_layer = "Ethernet";
  roce.roce_v2_gid_index = 3;
  const CheckResult slow{"probe_throughput", "rail0", "b", false, "slow"};
  EXPECT_THAT(Remedy(slow, {roce}),
              ::testing::StartsWith("ib_write_bw -d mlx5_5 -i 1 -x 3 <peer>"));
  roce.roce_v2_gid_index.reset();
  EXPECT_THAT(Remedy(slow, {roce}),
              ::testing::StartsWith("ib_write_bw -d mlx5_5 -i 1 -x <RoCE v2 GID index> <peer>"));
  inventory::Rail infiniband = Rail0();
  infiniband.link_layer = "InfiniBand";
  EXPECT_THAT(Remedy(slow, {infiniband}),
              ::testing::StartsWith("ib_write_bw -d mlx5_5 -i 1 <peer>"));
}

}  // namespace
}  // namespace rail::health
