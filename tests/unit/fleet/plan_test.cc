#include "rail/fleet/plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "simulated_fleet.h"

namespace rail::fleet {
namespace {

using simulated::Address;
using simulated::Fleet;

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

}  // namespace

// Readable failures: "10.0.0.2:9841 over rail0".
void PrintTo(const PlannedPair& pair, std::ostream* out) {
  *out << pair.peer << " over " << pair.rail;
}

namespace {

const std::vector<std::string> kTwoRails = {"rail0", "rail1"};

std::set<std::string> PeersOn(const std::vector<PlannedPair>& plan, const std::string& rail) {
  std::set<std::string> peers;
  for (const auto& pair : plan) {
    if (pair.rail == rail) peers.insert(pair.peer);
  }
  return peers;
}

TEST(PlanTest, LoneHostProbesNobody) {
  const auto targets = Fleet(1);
  EXPECT_THAT(PlanForHost(targets, Address(0), kTwoRails, {}), IsEmpty());
  const auto fleet = PlanForFleet(targets, kTwoRails, {});
  ASSERT_THAT(fleet, SizeIs(1));
  EXPECT_THAT(fleet.at(Address(0)), IsEmpty());
}

TEST(PlanTest, TwoHostsProbeEachOtherOnEveryRail) {
  const auto targets = Fleet(2);
  EXPECT_THAT(PlanForHost(targets, Address(0), kTwoRails, {}),
              ElementsAre(PlannedPair{Address(1), "rail0"}, PlannedPair{Address(1), "rail1"}));
  EXPECT_THAT(PlanForHost(targets, Address(1), kTwoRails, {}),
              ElementsAre(PlannedPair{Address(0), "rail0"}, PlannedPair{Address(0), "rail1"}));
}

TEST(PlanTest, KPlusOneHostsEachProbeAllOthers) {
  const PlanOptions options{.peers_per_rail = 3};
  const auto targets = Fleet(4);
  for (int host = 0; host < 4; ++host) {
    const auto plan = PlanForHost(targets, Address(host), {"rail0"}, options);
    std::set<std::string> expected;
    for (int other = 0; other < 4; ++other) {
      if (other != host) expected.insert(Address(other));
    }
    EXPECT_EQ(PeersOn(plan, "rail0"), expected) << Address(host);
  }
}

TEST(PlanTest, LargerFleetProbesExactlyKDistinctOthersPerRail) {
  const PlanOptions options{.peers_per_rail = 3, .seed = 7, .epoch = 11};
  const auto targets = Fleet(50);
  for (int host = 0; host < 50; ++host) {
    const auto plan = PlanForHost(targets, Address(host), kTwoRails, options);
    ASSERT_THAT(plan, SizeIs(6)) << Address(host);
    for (const auto& rail : kTwoRails) {
      const auto peers = PeersOn(plan, rail);
      EXPECT_THAT(peers, SizeIs(3)) << Address(host) << " " << rail;
      EXPECT_FALSE(peers.contains(Address(host)));
    }
  }
}

TEST(PlanTest, PlanIsSortedByRailThenPeer) {
  const auto plan = PlanForHost(Fleet(30), Address(3), {"rail1", "rail0"}, {});
  EXPECT_TRUE(std::is_sorted(plan.begin(), plan.end(), [](const auto& a, const auto& b) {
    return std::tie(a.rail, a.peer) < std::tie(b.rail, b.peer);
  }));
  ASSERT_THAT(plan, SizeIs(6));
  EXPECT_EQ(plan.front().rail, "rail0");
  EXPECT_EQ(plan.back().rail, "rail1");
}

TEST(PlanTest, SelfMissingFromTargetsPlansNothing) {
  EXPECT_THAT(PlanForHost(Fleet(10), "10.9.9.9:9841", kTwoRails, {}), IsEmpty());
}

TEST(PlanTest, RailsLabelKeepsHostsOffOtherRails) {
  auto targets = Fleet(12);
  // Hosts 0..3 are on rail0 only, 4..5 on rail1 only, the rest on both (no label).
  for (int host = 0; host < 4; ++host) targets[host].labels["rails"] = "rail0";
  for (int host = 4; host < 6; ++host) targets[host].labels["rails"] = " rail1 ";
  const PlanOptions options{.peers_per_rail = 2};
  const auto fleet = PlanForFleet(targets, kTwoRails, options);
  for (int host = 0; host < 12; ++host) {
    const auto& plan = fleet.at(Address(host));
    for (const auto& pair : plan) {
      const auto peer = std::find_if(targets.begin(), targets.end(),
                                     [&](const Target& t) { return t.address == pair.peer; });
      ASSERT_NE(peer, targets.end());
      EXPECT_TRUE(OnRail(*peer, pair.rail)) << pair.peer << " is not on " << pair.rail;
      EXPECT_TRUE(OnRail(targets[host], pair.rail)) << Address(host) << " not on " << pair.rail;
    }
  }
  EXPECT_THAT(PeersOn(fleet.at(Address(0)), "rail1"), IsEmpty());
  EXPECT_THAT(PeersOn(fleet.at(Address(0)), "rail0"), SizeIs(2));
  EXPECT_THAT(PeersOn(fleet.at(Address(4)), "rail0"), IsEmpty());
  EXPECT_THAT(PeersOn(fleet.at(Address(4)), "rail1"), SizeIs(2));
  // Asked for a rail its own target does not list, a host plans nothing over it.
  EXPECT_THAT(PeersOn(PlanForHost(targets, Address(0), kTwoRails, options), "rail1"), IsEmpty());
}

TEST(PlanTest, SmallRailWithFewerThanKOthersProbesAllOfThem) {
  auto targets = Fleet(10);
  for (auto& target : targets) target.labels["rails"] = "rail0";
  targets[0].labels["rails"] = "rail0,rail9";
  targets[1].labels["rails"] = "rail0,rail9";
  const auto plan = PlanForHost(targets, Address(0), {"rail9"}, {.peers_per_rail = 3});
  EXPECT_THAT(plan, ElementsAre(PlannedPair{Address(1), "rail9"}));
}

TEST(PlanTest, ZeroPeersPerRailPlansNothing) {
  EXPECT_THAT(PlanForHost(Fleet(10), Address(0), kTwoRails, {.peers_per_rail = 0}), IsEmpty());
  for (const auto& [address, plan] : PlanForFleet(Fleet(10), kTwoRails, {.peers_per_rail = 0})) {
    EXPECT_THAT(plan, IsEmpty()) << address;
  }
}

TEST(PlanTest, RepeatedTargetsPlanLikeTheMergedList) {
  auto targets = Fleet(20);
  auto repeated = targets;
  repeated.insert(repeated.end(), targets.begin(), targets.begin() + 10);
  for (int host = 0; host < 20; ++host) {
    EXPECT_EQ(PlanForHost(repeated, Address(host), kTwoRails, {}),
              PlanForHost(targets, Address(host), kTwoRails, {}));
  }
  EXPECT_EQ(PlanForFleet(repeated, kTwoRails, {}), PlanForFleet(targets, kTwoRails, {}));
}

TEST(PlanTest, HostAndFleetPlansAgree) {
  auto targets = Fleet(200);
  for (int host = 0; host < 200; host += 7) targets[host].labels["rails"] = "rail1,rail2";
  const std::vector<std::string> rails = {"rail0", "rail1", "rail2"};
  for (const PlanOptions& options :
       {PlanOptions{}, PlanOptions{.peers_per_rail = 5, .seed = 42, .epoch = 3}}) {
    const auto fleet = PlanForFleet(targets, rails, options);
    ASSERT_THAT(fleet, SizeIs(200));
    for (const auto& target : targets) {
      EXPECT_EQ(PlanForHost(targets, target.address, rails, options), fleet.at(target.address))
          << target.address;
    }
  }
}

TEST(PlanTest, PlanIsStableAcrossCallsAndTargetOrder) {
  const auto targets = Fleet(100);
  auto reversed = targets;
  std::reverse(reversed.begin(), reversed.end());
  const PlanOptions options{.seed = 5, .epoch = 9};
  for (int host = 0; host < 100; host += 9) {
    const auto first = PlanForHost(targets, Address(host), kTwoRails, options);
    EXPECT_EQ(PlanForHost(targets, Address(host), kTwoRails, options), first);
    EXPECT_EQ(PlanForHost(reversed, Address(host), kTwoRails, options), first);
  }
  EXPECT_EQ(PlanForFleet(targets, kTwoRails, options), PlanForFleet(reversed, kTwoRails, options));
}

// The fraction of hosts whose plan differs between two fleet plans.
double ChangedHosts(const std::map<std::string, std::vector<PlannedPair>>& before,
                    const std::map<std::string, std::vector<PlannedPair>>& after) {
  int changed = 0;
  for (const auto& [address, plan] : before) changed += after.at(address) != plan;
  return static_cast<double>(changed) / static_cast<double>(before.size());
}

TEST(PlanTest, NewEpochRedrawsTheRing) {
  const auto targets = Fleet(100);
  const auto epoch1 = PlanForFleet(targets, kTwoRails, {.epoch = 1});
  const auto epoch2 = PlanForFleet(targets, kTwoRails, {.epoch = 2});
  // A re-drawn ring keeps a host's 3 successors out of 99 only by chance (~1e-5 per host).
  EXPECT_GT(ChangedHosts(epoch1, epoch2), 0.9);
}

TEST(PlanTest, SeedChangesTheRing) {
  const auto targets = Fleet(100);
  EXPECT_GT(ChangedHosts(PlanForFleet(targets, kTwoRails, {.seed = 0}),
                         PlanForFleet(targets, kTwoRails, {.seed = 1})),
            0.9);
}

TEST(PlanTest, EachRailHasItsOwnRing) {
  const auto plan = PlanForHost(Fleet(100), Address(0), kTwoRails, {});
  EXPECT_NE(PeersOn(plan, "rail0"), PeersOn(plan, "rail1"));
}

TEST(PlanTest, EpochAtCountsWholeEpochsSinceUnixEpoch) {
  using std::chrono::hours;
  using std::chrono::seconds;
  const base::WallTime start{};
  EXPECT_EQ(EpochAt(start, hours(6)), 0u);
  EXPECT_EQ(EpochAt(start + hours(6) - seconds(1), hours(6)), 0u);
  EXPECT_EQ(EpochAt(start + hours(6), hours(6)), 1u);
  EXPECT_EQ(EpochAt(start + hours(24 * 365), hours(6)), 4u * 365u);
  EXPECT_EQ(EpochAt(start + hours(5), seconds(0)), 0u);
}

}  // namespace
}  // namespace rail::fleet
