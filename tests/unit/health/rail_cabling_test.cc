// rail_cabling on given neighbours: two rails on one switch port always fail, two rails on one
// switch fail a rail-optimized layout, a switch name outside its rail's pattern fails, a rail
// whose neighbour changed fails for health.cabling.change_window, and a rail without a known
// neighbour is held back only when a layout is configured.
#include <gmock/gmock.h>

#include <algorithm>

#include "health/check_helpers.h"
#include "health_fixture.h"
#include "support/fake_clock.h"

namespace rail::health::test {
namespace {

inventory::RailNeighbors Heard(const std::string& rail, const std::string& leaf,
                               const std::string& chassis, const std::string& port) {
  inventory::RailNeighbors out;
  out.rail = rail;
  out.netdev = "eth_" + rail;
  out.state = inventory::NeighborState::kAnnounced;
  lldp::Neighbor neighbor;
  neighbor.system_name = leaf;
  neighbor.chassis_id = chassis;
  neighbor.port_id = port;
  out.announcements.push_back({neighbor, 3});
  return out;
}

inventory::RailNeighbors Unheard(const std::string& rail) {
  inventory::RailNeighbors out;
  out.rail = rail;
  out.netdev = "eth_" + rail;
  out.state = inventory::NeighborState::kNoLldpd;
  out.reason = "no lldpd listens on /run/lldpd.socket";
  return out;
}

std::vector<CheckResult> Judge(const std::vector<inventory::RailNeighbors>& neighbors,
                               const Cabling& layout = {}) {
  HealthInputs inputs;
  inputs.neighbors = &neighbors;
  inputs.thresholds.cabling = layout;
  std::vector<CheckResult> out;
  detail::CheckRailCabling(inputs, out);
  return out;
}

TEST(RailCablingTest, NothingReadNoVerdict) {
  HealthInputs inputs;
  std::vector<CheckResult> out;
  detail::CheckRailCabling(inputs, out);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(Judge({Unheard("rail0")}).empty()) << "no layout: nothing to hold back";
}

TEST(RailCablingTest, RailsOnTheirOwnLeavesPass) {
  const Cabling layout{true, {{"rail0", "leaf-rail0"}, {"rail1", "leaf-rail1*"}}};
  const auto results = Judge({Heard("rail0", "leaf-rail0", "aa", "Ethernet1/1"),
                              Heard("rail1", "leaf-rail1-b", "bb", "Ethernet1/1")},
                             layout);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(Find(results, "rail_cabling", "rail0")->ok);
  EXPECT_TRUE(Find(results, "rail_cabling", "rail1")->ok);
}

TEST(RailCablingTest, TwoRailsOnOneSwitchPortFailWithoutAnyLayout) {
  const auto results = Judge({Heard("rail0", "leaf-rail0", "aa", "Ethernet1/1"),
                              Heard("rail1", "leaf-rail0", "aa", "Ethernet1/1")});
  const auto rail1 = Find(results, "rail_cabling", "rail1");
  EXPECT_FALSE(rail1->ok);
  EXPECT_EQ(rail1->reason,
            "rail1 lands on leaf-rail0 port Ethernet1/1: rail rail0 is on the same switch port, "
            "leaf-rail0 port Ethernet1/1");
  EXPECT_FALSE(Find(results, "rail_cabling", "rail0")->ok);
}

TEST(RailCablingTest, TwoRailsOnOneSwitchFailOnlyARailOptimizedLayout) {
  const std::vector<inventory::RailNeighbors> same_leaf = {
      Heard("rail0", "leaf-rail0", "aa", "Ethernet1/1"),
      Heard("rail1", "leaf-rail0", "aa", "Ethernet1/2")};
  EXPECT_TRUE(Find(Judge(same_leaf), "rail_cabling", "rail1")->ok);
  const auto results = Judge(same_leaf, Cabling{true, {}});
  const auto rail1 = Find(results, "rail_cabling", "rail1");
  EXPECT_FALSE(rail1->ok);
  EXPECT_EQ(rail1->reason,
            "rail1 lands on leaf-rail0 port Ethernet1/2: rail rail0 is on the same switch, "
            "leaf-rail0 port Ethernet1/1 (rail-optimized wants a switch per rail)");
}

TEST(RailCablingTest, SwitchOutsideTheRailsPatternFails) {
  const Cabling layout{false, {{"rail0", "leaf-rail0"}, {"rail1", "leaf-rail1"}}};
  const auto results = Judge({Heard("rail0", "leaf-rail0", "aa", "Ethernet1/1"),
                              Heard("rail1", "leaf-rail0", "aa", "Ethernet1/9")},
                             layout);
  EXPECT_TRUE(Find(results, "rail_cabling", "rail0")->ok);
  const auto rail1 = Find(results, "rail_cabling", "rail1");
  EXPECT_FALSE(rail1->ok);
  EXPECT_EQ(rail1->reason,
            "rail1 lands on leaf-rail0 port Ethernet1/9: its neighbour leaf-rail0 port "
            "Ethernet1/9 does not match health.cabling.switches 'leaf-rail1'");
}

// Within the old leaf's TTL after a recabling the rail hears both leaves: the wrong one fails it,
// whichever lldpd lists first.
TEST(RailCablingTest, EveryNeighbourOfARailIsJudged) {
  auto rail1 = Heard("rail1", "leaf-rail1", "bb", "Ethernet1/1");
  rail1.announcements.push_back(Heard("rail1", "leaf-rail0", "aa", "Ethernet1/9").announcements[0]);
  const Cabling layout{false, {{"rail1", "leaf-rail1"}}};
  for (int order = 0; order < 2; ++order) {
    const auto results = Judge({rail1}, layout);
    const auto verdict = Find(results, "rail_cabling", "rail1");
    EXPECT_FALSE(verdict->ok) << order;
    EXPECT_THAT(verdict->reason, ::testing::HasSubstr("its neighbour leaf-rail0 port Ethernet1/9 "
                                                      "does not match"))
        << order;
    std::swap(rail1.announcements[0], rail1.announcements[1]);
  }
}

TEST(RailCablingTest, UnknownNeighbourIsHeldBackUnderALayout) {
  const auto results = Judge({Unheard("rail0")}, Cabling{true, {}});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].held_back);
  EXPECT_EQ(results[0].reason,
            "no LLDP neighbour known (no_lldpd): no lldpd listens on /run/lldpd.socket");
}

// Readings of one rail over time, each judged as a scrape would: the history observes, then the
// check reads it.
struct Readings {
  std::optional<CheckResult> Judge(const inventory::RailNeighbors& rail) {
    const std::vector<inventory::RailNeighbors> neighbors{rail};
    history.Observe(neighbors, clock.Now());
    HealthInputs inputs;
    inputs.neighbors = &neighbors;
    inputs.neighbor_history = &history;
    inputs.now = clock.Now();
    std::vector<CheckResult> out;
    detail::CheckRailCabling(inputs, out);
    return Find(out, "rail_cabling", rail.rail);
  }
  ::rail::test::FakeClock clock;
  NeighborHistory history;
};

TEST(RailCablingTest, ANeighbourThatChangedFailsForTheChangeWindowNamingTheOldPort) {
  Readings readings;
  EXPECT_TRUE(readings.Judge(Heard("rail1", "leaf-rail1", "bb", "Ethernet1/2"))->ok);
  readings.clock.Advance(std::chrono::minutes(1));
  const auto moved = Heard("rail1", "leaf-rail0", "aa", "Ethernet1/2");
  const auto verdict = readings.Judge(moved);
  EXPECT_FALSE(verdict->ok);
  EXPECT_EQ(verdict->reason,
            "rail1 lands on leaf-rail0 port Ethernet1/2: its neighbour changed 0 s ago, from "
            "leaf-rail1 port Ethernet1/2 (a re-cabling or a failover; judged for "
            "health.cabling.change_window)");
  readings.clock.Advance(std::chrono::minutes(14));
  EXPECT_FALSE(readings.Judge(moved)->ok);
  readings.clock.Advance(std::chrono::minutes(1));  // the default window, 15 min, is over
  EXPECT_TRUE(readings.Judge(moved)->ok);
}

TEST(RailCablingTest, SilenceAndLldpdsOrderAreNoChange) {
  Readings readings;
  auto both = Heard("rail0", "leaf-a", "aa", "Ethernet1/1");
  both.announcements.push_back(Heard("rail0", "leaf-b", "bb", "Ethernet1/1").announcements[0]);
  EXPECT_TRUE(readings.Judge(both)->ok);
  readings.Judge(Unheard("rail0"));  // the TTL ran out: nothing heard is no new port
  std::reverse(both.announcements.begin(), both.announcements.end());
  EXPECT_TRUE(readings.Judge(both)->ok);
  const auto verdict = readings.Judge(Heard("rail0", "leaf-b", "bb", "Ethernet1/1"));
  EXPECT_FALSE(verdict->ok);
  EXPECT_THAT(verdict->reason,
              ::testing::HasSubstr("from leaf-a port Ethernet1/1 and leaf-b port Ethernet1/1"));
}

}  // namespace
}  // namespace rail::health::test
