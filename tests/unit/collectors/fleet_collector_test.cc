#include <gtest/gtest.h>

#include "rail/collectors/collector_set.h"
#include "rail/probe/result_store.h"
#include "rail/sysfs/filesystem.h"
#include "support/fake_clock.h"
#include "support/scrape.h"

namespace rail::collectors {
namespace {

using std::chrono::minutes;
using test::Sample;
using test::SampleCount;

class FleetCollectorTest : public ::testing::Test {
 protected:
  FleetCollectorTest() : sys_(std::string(RAIL_FIXTURES) + "/spark-dual-rail/sys"), store_(clock_) {
    sources_.inventory.sys = &sys_;
    sources_.inventory.proc = &sys_;
    sources_.health.results = &store_;
    sources_.fleet = [this]() -> std::optional<fleet::FleetStatus> { return status_; };
    status_.peers = 4;
    status_.self = "10.0.0.1:9841";
    status_.epoch = 41;
    status_.pairs = {{"10.0.0.2:9841", "rail0"}, {"10.0.0.3:9841", "rail0"}};
    status_.rails = {{"rail0", 2}, {"rail1", 0}};
    status_.plan_changes = 3;
    status_.max_probe_series = 100;
    status_.peer_names = {{"10.0.0.2:9841", "node2"}};
    fleet::SourceStatus source;
    source.name = "file_sd:/etc/peers.json";
    source.targets = 4;
    source.refreshes = 5;
    source.failures = 1;
    source.last_success = clock_.WallNow();
    status_.sources = {source};
    set_ = std::make_unique<CollectorSet>(sources_, std::vector<std::string>{"fleet"});
  }

  void Throughput(const std::string& peer, double bytes_per_second, bool success = true) {
    probe::ProbeResult result;
    result.kind = probe::ProbeKind::kUcxThroughput;
    result.peer = peer;
    result.rails = {"rail0"};
    result.success = success;
    result.finished_at = clock_.WallNow();
    result.message_size_bytes = 1 << 20;
    result.throughput_bytes_per_second = bytes_per_second;
    store_.Record(result, minutes(5));
  }

  test::FakeClock clock_;
  sysfs::RootedFilesystem sys_;
  probe::ResultStore store_;
  fleet::FleetStatus status_;
  Sources sources_;
  std::unique_ptr<CollectorSet> set_;
};

TEST_F(FleetCollectorTest, DiscoveryAndPlan) {
  const auto families = set_->Collect();
  const test::LabelMap source = {{"source", "file_sd:/etc/peers.json"}};
  EXPECT_EQ(Sample(families, "rail_fleet_discovery_targets", source), 4);
  EXPECT_EQ(Sample(families, "rail_fleet_discovery_errors_total", source), 1);
  EXPECT_EQ(Sample(families, "rail_fleet_discovery_refreshes_total", source), 5);
  EXPECT_EQ(Sample(families, "rail_fleet_peers", {}), 4);
  EXPECT_EQ(Sample(families, "rail_fleet_self_found", {}), 1);
  EXPECT_EQ(Sample(families, "rail_fleet_plan_epoch", {}), 41);
  EXPECT_EQ(Sample(families, "rail_fleet_plan_peers", {{"rail", "rail1"}}), 0);
  EXPECT_EQ(Sample(families, "rail_fleet_plan_peers", {{"rail", "rail0"}}), 2);
  EXPECT_EQ(Sample(families, "rail_fleet_plan_changes_total", {}), 3);
  EXPECT_EQ(Sample(families, "rail_fleet_probe_series_budget", {}), 100);
  EXPECT_EQ(
      Sample(families, "rail_fleet_peer_info", {{"peer", "10.0.0.2:9841"}, {"name", "node2"}}), 1);
  for (const auto reason : fleet::kPlanEmptyReasons) {
    EXPECT_EQ(Sample(families, "rail_fleet_plan_empty", {{"reason", std::string(reason)}}), 0)
        << reason;
  }
}

// Every reason is listed, the one that holds at 1: an alert needs no absent() to see the state.
TEST_F(FleetCollectorTest, AnEmptyPlanSaysWhy) {
  status_.self.clear();
  status_.pairs.clear();
  status_.plan_empty = "self_not_found";
  const auto families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_fleet_self_found", {}), 0);
  EXPECT_EQ(Sample(families, "rail_fleet_plan_empty", {{"reason", "self_not_found"}}), 1);
  EXPECT_EQ(Sample(families, "rail_fleet_plan_empty", {{"reason", "no_peer_on_rails"}}), 0);
}

TEST_F(FleetCollectorTest, RailSummariesCoverOnlyPlannedCurrentPeers) {
  Throughput("10.0.0.2:9841", 10e9);
  Throughput("10.0.0.3:9841", 0, false);
  Throughput("10.0.0.9:9841", 1e9);  // a static peer, or one of an old plan: not summarised
  const auto families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_fleet_probe_series", {}), 3);
  EXPECT_EQ(Sample(families, "rail_fleet_rail_throughput_median_bytes_per_second",
                   {{"kind", "ucx_throughput"}, {"rail", "rail0"}, {"memory", "host"}}),
            10e9);
  EXPECT_EQ(Sample(families, "rail_fleet_rail_peers",
                   {{"kind", "ucx_throughput"}, {"rail", "rail0"}, {"state", "ok"}}),
            1);
  EXPECT_EQ(Sample(families, "rail_fleet_rail_peers",
                   {{"kind", "ucx_throughput"}, {"rail", "rail0"}, {"state", "failed"}}),
            1);
  // Results older than three intervals are not current: the summary goes, the series stays.
  clock_.Advance(minutes(16));
  const auto later = set_->Collect();
  EXPECT_EQ(SampleCount(later, "rail_fleet_rail_throughput_median_bytes_per_second"), 0u);
  EXPECT_EQ(Sample(later, "rail_fleet_probe_series", {}), 3);
}

TEST_F(FleetCollectorTest, NothingWithoutAFleet) {
  sources_.fleet = [] { return std::optional<fleet::FleetStatus>{}; };
  CollectorSet set(sources_, {"fleet"});
  for (const auto& family : set.Collect()) {
    EXPECT_EQ(family.name.rfind("rail_fleet_", 0), std::string::npos) << family.name;
  }
}

}  // namespace
}  // namespace rail::collectors
