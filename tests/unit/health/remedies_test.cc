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
  EXPECT_EQ(CheckTokens().size(), 31u);
  EXPECT_EQ(Remedy({"no_such_check", "", "", false, "x"}, {}), "");
}

TEST(RemediesTest, FillsTheRailsNamesAndPlaceholdersOtherwise) {
  const CheckResult mtu{"mtu", "rail0", "", false, "MTU 1500"};
  EXPECT_EQ(Remedy(mtu, {Rail0()}), "ip link set dev ens5np0 mtu 9000");
  EXPECT_EQ(Remedy(mtu, {}), "ip link set dev <netdev> mtu 9000");
  EXPECT_THAT(Remedy({"transport_fallback", "rail0", "b", false, "tcp"}, {Rail0()}),
              ::testing::HasSubstr("UCX_NET_DEVICES=mlx5_5:1"));
}

// The fabric checks name the kernel's tools that show each fault and fix it, on the rail's own
// netdev and RDMA port.
TEST(RemediesTest, FabricChecksNameTheCommandsThatShowAndFixTheFault) {
  using ::testing::AllOf;
  using ::testing::HasSubstr;
  using ::testing::Not;
  const auto remedy = [](const std::string& check) {
    return Remedy({check, "rail0", "", false, "reason"}, {Rail0()});
  };
  EXPECT_THAT(remedy("port_discards"),
              AllOf(HasSubstr("ethtool -S ens5np0 | grep -E 'discard'"),
                    HasSubstr("dcb pfc show dev ens5np0"), HasSubstr("dcb buffer show dev ens5np0"),
                    HasSubstr("burst source")));
  // A host fault, said first, so that nobody starts with the switch.
  EXPECT_THAT(
      remedy("host_receive_starvation"),
      AllOf(::testing::StartsWith("host fault, not the fabric: "),
            HasSubstr("ethtool -S ens5np0 | grep -E 'out_of_buffer|ring_discards|total_discard'"),
            HasSubstr("ethtool -g ens5np0"), HasSubstr("rdma statistic show link mlx5_5/1"),
            HasSubstr("grep . /sys/class/infiniband/mlx5_5/ports/1/hw_counters/"
                      "out_of_buffer")));
  EXPECT_THAT(remedy("global_pause"),
              AllOf(HasSubstr("ethtool -a ens5np0"), HasSubstr("ethtool -A ens5np0 rx off tx off"),
                    HasSubstr("dcb pfc show dev ens5np0")));
  EXPECT_THAT(remedy("roce_retransmissions"),
              AllOf(HasSubstr("rdma statistic show link mlx5_5/1"),
                    HasSubstr("grep . /sys/class/infiniband/mlx5_5/ports/1/hw_counters/*"),
                    HasSubstr("ethtool -S ens5np0 | grep -E 'discard|pause'"),
                    HasSubstr("dcb pfc show dev ens5np0"), HasSubstr("RNR")));
  EXPECT_THAT(remedy("roce_drops"),
              AllOf(HasSubstr("prio[0-7]_(buf|cong)_discard"), Not(HasSubstr("out_of_buffer"))));
  EXPECT_THAT(remedy("link_errors"),
              AllOf(HasSubstr("ethtool -S ens5np0 | grep -E 'crc|symbol|fec|corrected|err_lane'"),
                    HasSubstr("ethtool -m ens5np0"), HasSubstr("ethtool --show-fec ens5np0")));
  EXPECT_THAT(remedy("link_flaps"),
              AllOf(HasSubstr("module_unplug"), HasSubstr("ethtool -m ens5np0")));
  EXPECT_THAT(remedy("qos_config"), HasSubstr("ethtool -a ens5np0"));
  // Without the rail's names, placeholders: never a command on some other interface.
  EXPECT_THAT(
      Remedy({"host_receive_starvation", "rail9", "", false, "x"}, {Rail0()}),
      AllOf(HasSubstr("ethtool -g <netdev>"), HasSubstr("rdma statistic show link <device>/1")));
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
