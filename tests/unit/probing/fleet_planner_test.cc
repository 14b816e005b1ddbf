// The fleet thread's work, one Update at a time on a fake clock: discovery, self, the plan of the
// epoch, duplicates merged, and the owner told only when the pairs change.
#include "rail/probing/fleet_planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/captured_log.h"
#include "support/fake_clock.h"

namespace rail::probing {
namespace {

using ::testing::HasSubstr;

std::vector<fleet::Target> Hosts(int count) {
  std::vector<fleet::Target> targets;
  for (int i = 1; i <= count; ++i) {
    targets.push_back({"10.0.0." + std::to_string(i) + ":9841", {}});
  }
  return targets;
}

struct Harness {
  test::FakeClock clock;
  std::vector<std::vector<fleet::PlannedPair>> changes;
  std::map<std::string, std::string> names;

  std::unique_ptr<FleetPlanner> Make(int hosts, std::optional<std::string> self) {
    return Make(Hosts(hosts), std::move(self));
  }
  std::unique_ptr<FleetPlanner> Make(std::vector<fleet::Target> targets,
                                     std::optional<std::string> self) {
    FleetConfig config;
    config.self = std::move(self);
    config.peers_per_rail = 2;
    config.epoch = std::chrono::hours(1);
    std::vector<std::unique_ptr<fleet::Source>> sources;
    sources.push_back(fleet::MakeStaticSource(std::move(targets)));
    return std::make_unique<FleetPlanner>(
        config, std::move(sources), std::vector<std::string>{"rail0", "rail1"},
        FleetPlanner::Identity{9841, "node1"}, clock, [this] { return names; },
        [this](const std::vector<fleet::PlannedPair>& pairs) { changes.push_back(pairs); });
  }
};

TEST(FleetPlannerTest, PlansKPeersPerRailAndTellsTheOwnerOnce) {
  Harness harness;
  auto fleet = harness.Make(10, "10.0.0.1:9841");
  fleet->Update();
  ASSERT_EQ(harness.changes.size(), 1u);
  EXPECT_EQ(harness.changes[0].size(), 4u);  // k = 2 on each of two rails
  for (const auto& pair : harness.changes[0]) EXPECT_NE(pair.peer, "10.0.0.1:9841");
  fleet->Update();  // nothing changed: the runner is left alone
  EXPECT_EQ(harness.changes.size(), 1u);
  const auto status = fleet->Status();
  EXPECT_EQ(status.self, "10.0.0.1:9841");
  EXPECT_EQ(status.peers, 10u);
  EXPECT_EQ(status.rails.at("rail0"), 2u);
  EXPECT_EQ(status.plan_changes, 1u);
  ASSERT_EQ(status.sources.size(), 1u);
  EXPECT_TRUE(status.sources[0].healthy);
}

TEST(FleetPlannerTest, ANewEpochRedrawsThePlan) {
  Harness harness;
  auto fleet = harness.Make(50, "10.0.0.1:9841");
  fleet->Update();
  const auto epoch = fleet->Status().epoch;
  // Several epochs: with 49 candidates each, some epoch surely picks other peers.
  for (int i = 0; i < 5; ++i) {
    harness.clock.Advance(std::chrono::hours(1));
    fleet->Update();
  }
  EXPECT_EQ(fleet->Status().epoch, epoch + 5);
  EXPECT_GT(harness.changes.size(), 1u);
  EXPECT_NE(harness.changes.front(), harness.changes.back());
}

// A configured fleet.self the targets do not list is no self: not found (rail_fleet_self_found
// 0), an empty plan that says why, and one log line naming fleet.self and the targets.
TEST(FleetPlannerTest, AConfiguredSelfNotAmongTheTargetsIsNotFound) {
  Harness harness;
  auto fleet = harness.Make(5, "10.9.9.9:9841");
  test::CapturedLog log;
  fleet->Update();
  EXPECT_TRUE(harness.changes.empty());  // the empty plan it started with
  const auto status = fleet->Status();
  EXPECT_EQ(status.self, "");
  EXPECT_TRUE(status.pairs.empty());
  EXPECT_EQ(status.plan_empty, "self_not_found");
  const std::string logged = log.Take();
  EXPECT_THAT(logged, HasSubstr("not among the 5 discovered targets (fleet.self 10.9.9.9:9841 is "
                                "not one of them; "));
  EXPECT_THAT(logged, HasSubstr("the plan gives this agent no peer although 5 targets"));
  fleet->Update();  // the same state: logged once
  EXPECT_EQ(log.Take(), "");
}

TEST(FleetPlannerTest, APlanWithPeersOrAFleetOfOneIsNotEmpty) {
  Harness harness;
  auto fleet = harness.Make(4, "10.0.0.1:9841");
  fleet->Update();
  EXPECT_EQ(fleet->Status().plan_empty, "");
  Harness alone;
  auto single = alone.Make(1, "10.0.0.1:9841");
  single->Update();
  EXPECT_TRUE(single->Status().pairs.empty());
  EXPECT_EQ(single->Status().plan_empty, "");  // nobody else to probe
}

TEST(FleetPlannerTest, NoOtherTargetOnOurRailsIsAnEmptyPlanWithItsReason) {
  Harness harness;
  auto fleet = harness.Make({{"10.0.0.1:9841", {{"rails", "rail0"}}},
                             {"10.0.0.2:9841", {{"rails", "rail7"}}},
                             {"10.0.0.3:9841", {{"rails", "rail7"}}}},
                            "10.0.0.1:9841");
  fleet->Update();
  EXPECT_EQ(fleet->Status().self, "10.0.0.1:9841");
  EXPECT_EQ(fleet->Status().plan_empty, "no_peer_on_rails");
}

TEST(FleetPlannerTest, OnlyOurOwnDuplicateIsAnEmptyPlanWithItsReason) {
  Harness harness;
  auto fleet = harness.Make(2, "10.0.0.1:9841");
  fleet->Update();
  harness.names = {{"10.0.0.2:9841", "node1"}};  // this agent, listed twice
  fleet->Update();
  EXPECT_TRUE(fleet->Status().pairs.empty());
  EXPECT_EQ(fleet->Status().plan_empty, "duplicates_only");
}

TEST(FleetPlannerTest, ATargetAnsweringWithOurNameIsDropped) {
  Harness harness;
  auto fleet = harness.Make(3, "10.0.0.1:9841");  // two peers, k = 2: both planned
  fleet->Update();
  ASSERT_EQ(harness.changes.back().size(), 4u);
  harness.names = {{"10.0.0.2:9841", "node1"}, {"10.0.0.3:9841", "node3"}};
  fleet->Update();
  const auto status = fleet->Status();
  EXPECT_EQ(status.duplicates, std::vector<std::string>{"10.0.0.2:9841"});
  EXPECT_EQ(status.peer_names.at("10.0.0.3:9841"), "node3");
  ASSERT_EQ(harness.changes.size(), 2u);
  for (const auto& pair : harness.changes.back()) EXPECT_EQ(pair.peer, "10.0.0.3:9841");
}

TEST(FleetPlannerTest, ADuplicateStaysOutAfterItsSeriesAreGone) {
  Harness harness;
  auto fleet = harness.Make(3, "10.0.0.1:9841");
  fleet->Update();
  harness.names = {{"10.0.0.2:9841", "node1"}};
  fleet->Update();
  ASSERT_EQ(harness.changes.size(), 2u);
  // Its series are withdrawn with the new plan, so the store no longer knows its name.
  harness.names.clear();
  for (int i = 0; i < 3; ++i) fleet->Update();
  EXPECT_EQ(harness.changes.size(), 2u);
  EXPECT_EQ(fleet->Status().duplicates, std::vector<std::string>{"10.0.0.2:9841"});
}

}  // namespace
}  // namespace rail::probing
