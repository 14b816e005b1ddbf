// mtu (between the host's rails) and peer_mtu (against what the peer reported).
#include <gmock/gmock.h>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

TEST(MtuTest, RailsWithTheSameMtuPass) {
  HostConfig config;
  config.rails = {DeviceRail("rail0", "rocep1s0f0"), DeviceRail("rail1", "rocep1s0f1")};
  const Host host("spark-dual-rail", config);
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "mtu", "rail0")->ok);
  EXPECT_TRUE(Find(results, "mtu", "rail1")->ok);
}

TEST(MtuTest, MismatchFailsTheOddRails) {
  // Two rails at 9000, two (the second PCIe functions) left at 1500: on a tie the smaller MTU is
  // the one left at a default.
  const Host host("spark-dual-rail");
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "mtu", "rocep1s0f0:1")->ok);
  EXPECT_TRUE(Find(results, "mtu", "rocep1s0f1:1")->ok);
  const auto odd = Find(results, "mtu", "roceP2p1s0f0:1");
  EXPECT_FALSE(odd->ok);
  EXPECT_EQ(odd->reason,
            "MTU 1500 on enP2p1s0f0np0 (class/net/enP2p1s0f0np0/mtu), while rocep1s0f0:1, "
            "rocep1s0f1:1 use 9000");
  EXPECT_FALSE(Find(results, "mtu", "roceP2p1s0f1:1")->ok);
}

TEST(MtuTest, MajorityIsTheReference) {
  HostConfig config;
  config.rails = {DeviceRail("a", "roceP2p1s0f0"), DeviceRail("b", "roceP2p1s0f1"),
                  DeviceRail("c", "rocep1s0f0")};
  const Host host("spark-dual-rail", config);
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "mtu", "a")->ok);
  EXPECT_TRUE(Find(results, "mtu", "b")->ok);
  EXPECT_FALSE(Find(results, "mtu", "c")->ok);
}

TEST(PeerMtuTest, ComparesTheSameRailOnBothEnds) {
  HostConfig config;
  config.rails = {DeviceRail("rail0", "rocep1s0f0"), DeviceRail("rail1", "rocep1s0f1")};
  Host host("spark-dual-rail", config);
  host.AddResult(probe::ProbeKind::kUcxRtt, {"rail0"}, 0).peer_rail_mtus = {{"rail0", 9000},
                                                                            {"rail1", 1500}};
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "peer_mtu", "rail0", "b")->ok);
  const auto mismatch = Find(results, "peer_mtu", "rail1", "b");
  EXPECT_FALSE(mismatch->ok);
  EXPECT_EQ(mismatch->reason,
            "MTU 9000 on enp1s0f1np1 here, 1500 on the peer's rail rail1; RoCE active_mtu 4096 "
            "here, 1024 on the peer: RDMA between them runs at 1024");
}

// RoCE's active_mtu follows the netdev MTU (the largest IB MTU under it less the RoCE headers):
// 9000 and 4200 both give 4096, so only TCP's frames differ; 4000 gives 2048.
TEST(PeerMtuTest, RoceActiveMtusOfBothEndsAreNamed) {
  HostConfig config;
  config.rails = {DeviceRail("rail0", "rocep1s0f0"), DeviceRail("rail1", "rocep1s0f1")};
  Host host("spark-dual-rail", config);
  host.AddResult(probe::ProbeKind::kUcxRtt, {"rail0"}, 0).peer_rail_mtus = {{"rail0", 4200},
                                                                            {"rail1", 4000}};
  const auto results = host.Evaluate();
  EXPECT_THAT(Find(results, "peer_mtu", "rail0", "b")->reason,
              ::testing::EndsWith("; RoCE active_mtu 4096 on both ends: RDMA is not affected"));
  const auto rail1 = Find(results, "peer_mtu", "rail1", "b");
  EXPECT_FALSE(rail1->ok);
  EXPECT_THAT(rail1->reason,
              ::testing::EndsWith("; RoCE active_mtu 4096 here, 2048 on the peer: RDMA between "
                                  "them runs at 2048"));
}

TEST(PeerMtuTest, PeerThatDoesNotReportMtusHasNoVerdict) {
  HostConfig config;
  config.rails = {DeviceRail("rail0", "rocep1s0f0")};
  Host host("spark-dual-rail", config);
  host.AddResult(probe::ProbeKind::kUcxRtt, {"rail0"}, 0);
  EXPECT_EQ(test::Count(host.Evaluate(), "peer_mtu"), 0u);
}

TEST(PeerMtuTest, LatestResultOfThePeerCounts) {
  HostConfig config;
  config.rails = {DeviceRail("rail0", "rocep1s0f0")};
  Host host("spark-dual-rail", config);
  auto& old = host.AddResult(probe::ProbeKind::kUcxRtt, {"rail0"}, 0);
  old.peer_rail_mtus = {{"rail0", 1500}};
  old.finished_at = std::chrono::system_clock::time_point(std::chrono::seconds(100));
  auto& fixed = host.AddResult(probe::ProbeKind::kTcpRtt, {"rail0"}, 0);
  fixed.peer_rail_mtus = {{"rail0", 9000}};
  fixed.finished_at = std::chrono::system_clock::time_point(std::chrono::seconds(200));
  EXPECT_TRUE(Find(host.Evaluate(), "peer_mtu", "rail0", "b")->ok);
}

}  // namespace
}  // namespace rail::health::test
