// qos_config: PFC on the RoCE priority, rails of one host configured alike, and no verdict (never
// a pass) for a netdev without DCB.
#include <gmock/gmock.h>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

nic::DcbConfig RoceDcb(std::uint8_t pfc_enabled = 0x08) {
  nic::DcbConfig dcb;
  dcb.state = nic::DcbState::kAvailable;
  dcb.pfc.emplace().enabled = pfc_enabled;
  dcb.dscp_map = {{26, 3}, {48, 6}};
  return dcb;
}

inventory::RailQos RailQos(std::string rail, std::string netdev, nic::DcbConfig dcb) {
  return {std::move(rail), std::move(netdev), std::move(dcb), std::nullopt};
}

// Every verdict on the spark-dual-rail tree with the rails' DCB configuration `qos`.
std::vector<CheckResult> EvaluateSpark(std::vector<inventory::RailQos> qos,
                                       unsigned roce_priority = 3) {
  HostConfig config;
  config.health.roce_priority = roce_priority;
  Host host("spark-dual-rail", config);
  host.qos = std::move(qos);
  return host.Evaluate();
}

TEST(QosConfigTest, PfcOnTheRocePriorityEverywherePasses) {
  const auto results = EvaluateSpark(
      {RailQos("rail0", "enp1s0f0np0", RoceDcb()), RailQos("rail1", "enp1s0f1np1", RoceDcb())});
  EXPECT_EQ(Count(results, "qos_config"), 2u);
  EXPECT_TRUE(Find(results, "qos_config", "rail0")->ok);
  EXPECT_TRUE(Find(results, "qos_config", "rail1")->ok);
}

TEST(QosConfigTest, PfcOffOnTheRocePriorityFails) {
  // PFC on priority 4 on both rails: alike, but not where RoCE runs (priority 3).
  const auto results = EvaluateSpark({RailQos("rail0", "enp1s0f0np0", RoceDcb(0x10)),
                                      RailQos("rail1", "enp1s0f1np1", RoceDcb(0x10))});
  const auto verdict = Find(results, "qos_config", "rail0");
  ASSERT_TRUE(verdict);
  EXPECT_FALSE(verdict->ok);
  EXPECT_EQ(verdict->reason,
            "PFC is off on the RoCE priority 3 of enp1s0f0np0 (PFC on priorities 4; dcb pfc show "
            "dev enp1s0f0np0): RoCE traffic there is not lossless; dcb pfc set dev enp1s0f0np0 "
            "prio-pfc 3:on");
  // The RoCE priority is the configuration's: with 4 the same settings pass.
  const auto on_four = EvaluateSpark({RailQos("rail0", "enp1s0f0np0", RoceDcb(0x10))}, 4);
  EXPECT_TRUE(Find(on_four, "qos_config", "rail0")->ok);
}

TEST(QosConfigTest, RailsConfiguredDifferentlyFailTheOddOne) {
  auto pcp = RoceDcb(0x18);
  pcp.dscp_map.clear();  // PCP trust, PFC on 3 and 4
  auto remapped = RoceDcb();
  remapped.dscp_map = {{26, 4}, {48, 6}};
  const auto results = EvaluateSpark(
      {RailQos("rail0", "enp1s0f0np0", RoceDcb()), RailQos("rail1", "enp1s0f1np1", RoceDcb()),
       RailQos("rail2", "enP2p1s0f0np0", pcp), RailQos("rail3", "enP2p1s0f1np1", remapped)});
  EXPECT_TRUE(Find(results, "qos_config", "rail0")->ok);
  EXPECT_TRUE(Find(results, "qos_config", "rail1")->ok);
  const auto odd = Find(results, "qos_config", "rail2");
  EXPECT_FALSE(odd->ok);
  EXPECT_EQ(odd->reason,
            "enP2p1s0f0np0 is configured unlike rail rail0, rail1: PFC on priorities 3,4 here, 3 "
            "there; trust pcp here, dscp there; DSCP 26 to priority none here, 3 there, DSCP 48 "
            "to priority none here, 6 there (compare dcb pfc show and dcb app show on each)");
  const auto remapped_verdict = Find(results, "qos_config", "rail3");
  EXPECT_FALSE(remapped_verdict->ok);
  EXPECT_THAT(remapped_verdict->reason, HasSubstr(": DSCP 26 to priority 4 here, 3 there ("));
}

TEST(QosConfigTest, TwoRailsThatDifferBothFail) {
  // No majority: neither rail is the reference, so both say how they differ.
  auto other = RoceDcb();
  other.dscp_map.push_back({46, 5});
  const auto results = EvaluateSpark(
      {RailQos("rail0", "enp1s0f0np0", RoceDcb()), RailQos("rail1", "enp1s0f1np1", other)});
  EXPECT_THAT(Find(results, "qos_config", "rail0")->reason,
              HasSubstr("unlike rail rail1: DSCP 46 to priority none here, 5 there"));
  EXPECT_THAT(Find(results, "qos_config", "rail1")->reason,
              HasSubstr("unlike rail rail0: DSCP 46 to priority 5 here, none there"));
}

TEST(QosConfigTest, NoDcbGivesNoVerdictWithItsReason) {
  // A veth: the kernel answers EOPNOTSUPP. Not "PFC off", and not a pass either.
  nic::DcbConfig veth;
  veth.state = nic::DcbState::kNotSupported;
  veth.error = "the netdev has no DCB operations (the kernel answers EOPNOTSUPP)";
  const auto qos = RailQos("rail1", "xa1", veth);
  const auto results = EvaluateSpark({RailQos("rail0", "enp1s0f0np0", RoceDcb(0x10)), qos});
  EXPECT_FALSE(Find(results, "qos_config", "rail1"));
  // The rail with DCB is still judged, on its own: PFC off on 3, and no sibling to differ from.
  EXPECT_THAT(Find(results, "qos_config", "rail0")->reason, HasSubstr("PFC is off"));
  EXPECT_THAT(Find(results, "qos_config", "rail0")->reason, Not(HasSubstr("unlike")));
  EXPECT_EQ(QosConfigUnjudged(qos),
            "no DCB on xa1: the netdev has no DCB operations (the kernel answers EOPNOTSUPP); PFC "
            "and trust are unknown, so RoCE there is not known to be lossless");
  auto no_pfc = RoceDcb();
  no_pfc.pfc.reset();
  EXPECT_THAT(QosConfigUnjudged(RailQos("rail2", "eth0", no_pfc)),
              HasSubstr("reports no IEEE PFC configuration"));
  EXPECT_EQ(QosConfigUnjudged(RailQos("rail0", "enp1s0f0np0", RoceDcb())), "");
}

TEST(QosConfigTest, NotReadMeansNoVerdict) {
  // The qos collector off: nothing read, nothing said.
  const Host host("spark-dual-rail");
  EXPECT_EQ(Count(host.Evaluate(), "qos_config"), 0u);
}

}  // namespace
}  // namespace rail::health::test

namespace rail::health::test {
namespace {

TEST(QosConfigTest, GlobalPauseOnARailIsAFinding) {
  HostConfig config;
  Host host("spark-dual-rail", config);
  host.qos = {RailQos("rail0", "enp1s0f0np0", RoceDcb()),
              RailQos("rail1", "enp1s0f1np1", RoceDcb())};
  std::vector<inventory::RailFabric> fabric(2);
  fabric[0].rail = "rail0";
  fabric[0].reading.netdev = "enp1s0f0np0";
  fabric[0].reading.pause = nic::PauseParameters{false, true, true};  // ethtool -a: RX on, TX on
  fabric[1].rail = "rail1";
  fabric[1].reading.netdev = "enp1s0f1np1";
  fabric[1].reading.pause = nic::PauseParameters{true, false, false};
  auto inputs = host.Inputs();
  inputs.fabric = &fabric;
  const auto results = EvaluateChecks(inputs);
  const auto paused = Find(results, "qos_config", "rail0");
  ASSERT_TRUE(paused);
  EXPECT_FALSE(paused->ok);
  EXPECT_THAT(paused->reason, HasSubstr("802.3x pause is on on enp1s0f0np0 (rx on, tx on)"));
  EXPECT_TRUE(Find(results, "qos_config", "rail1")->ok) << "autonegotiated, but off both ways";
}

}  // namespace
}  // namespace rail::health::test
