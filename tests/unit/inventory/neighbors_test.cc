// Each rail's neighbour state from what lldpd answered and the NIC's private flags (ice's
// recorded fw-lldp-agent on and off, tests/fixtures/ethtool), and ages on a given wall clock.
#include "rail/inventory/neighbors.h"

#include <gtest/gtest.h>

#include "support/fixture_paths.h"

namespace rail::inventory {
namespace {

using rail::test::kEthtoolDumps;

Rail EthernetRail(const std::string& name, const std::string& netdev) {
  Rail rail;
  rail.name = name;
  rail.netdev = netdev;
  rail.link_layer = "Ethernet";
  return rail;
}

lldp::Neighbor Leaf(const std::string& name, std::int64_t last_change) {
  lldp::Neighbor neighbor;
  neighbor.system_name = name;
  neighbor.chassis_id = "0c:42:a1:00:00:01";
  neighbor.port_id = "Ethernet1/7";
  neighbor.port_description = "to host a";
  neighbor.vlan = 100;
  neighbor.last_change_epoch_seconds = last_change;
  return neighbor;
}

lldp::Neighbors Answered(std::map<std::string, std::vector<lldp::Neighbor>> interfaces) {
  lldp::Neighbors lldpd;
  lldpd.state = lldp::DaemonState::kAnswered;
  lldpd.socket_path = "/run/lldpd.socket";
  lldpd.interfaces = std::move(interfaces);
  return lldpd;
}

lldp::Neighbors NotRunning() {
  lldp::Neighbors lldpd;
  lldpd.state = lldp::DaemonState::kNotRunning;
  lldpd.socket_path = "/run/lldpd.socket";
  lldpd.error = "no lldpd listens on /run/lldpd.socket";
  return lldpd;
}

TEST(NeighborStateTest, HeardNeighbourIsOkWhateverTheFirmwareFlagSays) {
  const auto lldpd = Answered({{"eth0", {Leaf("leaf-rail0", 0)}}});
  EXPECT_EQ(DecideNeighborState(EthernetRail("r0", "eth0"), lldpd, std::nullopt),
            NeighborState::kAnnounced);
  EXPECT_EQ(DecideNeighborState(EthernetRail("r0", "eth0"), lldpd, true),
            NeighborState::kAnnounced);
}

TEST(NeighborStateTest, WhyNothingWasHeard) {
  const auto quiet = Answered({{"eth0", {}}});
  EXPECT_EQ(DecideNeighborState(EthernetRail("r0", "eth0"), quiet, false),
            NeighborState::kNoNeighbor);
  EXPECT_EQ(DecideNeighborState(EthernetRail("r0", "eth0"), quiet, true),
            NeighborState::kFirmwareAgent);
  EXPECT_EQ(DecideNeighborState(EthernetRail("r1", "eth1"), quiet, std::nullopt),
            NeighborState::kNotWatched);
  EXPECT_EQ(DecideNeighborState(EthernetRail("r0", "eth0"), NotRunning(), std::nullopt),
            NeighborState::kNoLldpd);
  // Starting lldpd would not help while the firmware takes the frames: that is said first.
  EXPECT_EQ(DecideNeighborState(EthernetRail("r0", "eth0"), NotRunning(), true),
            NeighborState::kFirmwareAgent);
  lldp::Neighbors denied = NotRunning();
  denied.state = lldp::DaemonState::kError;
  EXPECT_EQ(DecideNeighborState(EthernetRail("r0", "eth0"), denied, false),
            NeighborState::kLldpdError);
}

TEST(NeighborStateTest, InfinibandAndNetdevlessRails) {
  Rail ib = EthernetRail("mlx5_0:1", "ib0");
  ib.link_layer = "InfiniBand";
  EXPECT_EQ(DecideNeighborState(ib, NotRunning(), std::nullopt), NeighborState::kInfiniband);
  EXPECT_EQ(DecideNeighborState(EthernetRail("r0", ""), NotRunning(), std::nullopt),
            NeighborState::kNoNetdev);
}

TEST(NeighborStateTest, IceFirmwareAgentFlagFromRecordedPrivateFlags) {
  const sysfs::RootedFilesystem dumps(kEthtoolDumps);
  const nic::DumpStatisticsSource nic(dumps);
  EXPECT_EQ(FirmwareLldpAgent(nic, "ice-fw-lldp-on"), true);
  EXPECT_EQ(FirmwareLldpAgent(nic, "ice-fw-lldp-off"), false);
  EXPECT_EQ(FirmwareLldpAgent(nic, "bnxt_en"), std::nullopt) << "nothing recorded: unknown";
}

TEST(ReadRailNeighborsTest, FirmwareAgentWithItsFixAndNothingElse) {
  const sysfs::RootedFilesystem dumps(kEthtoolDumps);
  const nic::DumpStatisticsSource nic(dumps);
  const auto rails = ReadRailNeighbors(
      {EthernetRail("r0", "ice-fw-lldp-on"), EthernetRail("r1", "ice-fw-lldp-off")},
      Answered({{"ice-fw-lldp-on", {}}, {"ice-fw-lldp-off", {}}}), nic, base::WallTime{});
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_EQ(rails[0].state, NeighborState::kFirmwareAgent);
  EXPECT_STREQ(NeighborStateName(rails[0].state), "firmware_lldp_agent");
  EXPECT_EQ(rails[0].remedy, "ethtool --set-priv-flags ice-fw-lldp-on fw-lldp-agent off");
  EXPECT_TRUE(rails[0].announcements.empty());
  EXPECT_EQ(rails[1].state, NeighborState::kNoNeighbor);
  EXPECT_EQ(rails[1].remedy, "");
}

TEST(ReadRailNeighborsTest, NoLldpdSaysHowToStartIt) {
  const sysfs::RootedFilesystem dumps(kEthtoolDumps);
  const nic::DumpStatisticsSource nic(dumps);
  const auto rails = ReadRailNeighbors({EthernetRail("r0", "eth0")}, NotRunning(), nic, {});
  ASSERT_EQ(rails.size(), 1u);
  EXPECT_STREQ(NeighborStateName(rails[0].state), "no_lldpd");
  EXPECT_EQ(rails[0].remedy, "apt install lldpd && systemctl enable --now lldpd");
  EXPECT_EQ(rails[0].reason, "no lldpd listens on /run/lldpd.socket");
  EXPECT_TRUE(rails[0].announcements.empty());
}

TEST(ReadRailNeighborsTest, AgesOnTheGivenWallClockNeverNegative) {
  const sysfs::RootedFilesystem dumps(kEthtoolDumps);
  const nic::DumpStatisticsSource nic(dumps);
  const base::WallTime now{std::chrono::seconds(1'000'000)};
  const auto rails = ReadRailNeighbors({EthernetRail("r0", "eth0"), EthernetRail("r1", "eth1")},
                                       Answered({{"eth0", {Leaf("leaf-rail0", 1'000'000 - 42)}},
                                                 {"eth1", {Leaf("leaf-rail1", 1'000'000 + 5)}}}),
                                       nic, now);
  ASSERT_EQ(rails.size(), 2u);
  ASSERT_EQ(rails[0].announcements.size(), 1u);
  EXPECT_EQ(rails[0].announcements[0].neighbor.system_name, "leaf-rail0");
  EXPECT_DOUBLE_EQ(rails[0].announcements[0].age_seconds, 42);
  EXPECT_DOUBLE_EQ(rails[1].announcements[0].age_seconds, 0) << "a clock behind lldpd's";
  EXPECT_EQ(rails[0].remedy, "");
}

}  // namespace
}  // namespace rail::inventory
