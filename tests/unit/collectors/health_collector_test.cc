// The health collector's exposition: rail_check_ok for every verdict, rail_check_info with the
// reason for failing ones, and changes reported to the agent's HealthLog.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

#include "rail/base/build_info.h"
#include "rail/collectors/collector_set.h"
#include "rail/health/checks.h"
#include "rail/probe/result_store.h"
#include "rail/sysfs/filesystem.h"
#include "support/fake_clock.h"
#include "support/scrape.h"

namespace rail::collectors {
namespace {

using test::Sample;
using ::testing::HasSubstr;

class HealthCollectorTest : public ::testing::Test {
 protected:
  HealthCollectorTest()
      : sys_(std::string(RAIL_FIXTURES) + "/spark-dual-rail/sys"),
        proc_(std::string(RAIL_FIXTURES) + "/spark-dual-rail/proc"),
        store_(clock_) {
    inventory::RailConfig rail0;
    rail0.name = "rail0";
    rail0.device = "rocep1s0f0";
    inventory::RailConfig rail1 = rail0;
    rail1.name = "rail1";
    rail1.device = "roceP2p1s0f0";  // MTU 1500 against rail0's 9000
    sources_.inventory.rails = {rail0, rail1};
    sources_.inventory.discover_unlisted =
        inventory::DiscoverUnlisted(sources_.inventory.rails, std::nullopt);
    sources_.inventory.sys = &sys_;
    sources_.inventory.proc = &proc_;
    sources_.health.results = &store_;
    sources_.health.own_agent_version = base::GetBuildInfo().version;
    sources_.health.own_ucx_version = "1.13.1";  // as the probe worker reports it
    sources_.health_log = &log_;
    sources_.health.interface_addresses = [] {
      return std::vector<health::InterfaceAddress>{{"enp1s0f0np0", "192.168.100.11", 24},
                                                   {"enP2p1s0f0np0", "192.168.100.15", 24}};
    };
    set_ = std::make_unique<CollectorSet>(sources_, std::vector<std::string>{"health"});
  }

  test::FakeClock clock_;
  sysfs::RootedFilesystem sys_;
  sysfs::RootedFilesystem proc_;
  probe::ResultStore store_;
  health::HealthLog log_;
  Sources sources_;
  std::unique_ptr<CollectorSet> set_;
};

TEST_F(HealthCollectorTest, ExportsVerdictsAndReasons) {
  const auto families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_check_ok",
                   {{"check", "port_active"}, {"rail", "rail0"}, {"peer", ""}}),
            1);
  EXPECT_EQ(Sample(families, "rail_check_ok", {{"check", "mtu"}, {"rail", "rail0"}}), 1);
  EXPECT_EQ(Sample(families, "rail_check_ok", {{"check", "mtu"}, {"rail", "rail1"}}), 0);
  EXPECT_EQ(Sample(families, "rail_check_ok", {{"check", "duplicate_subnet"}, {"rail", "rail0"}}),
            0);
  EXPECT_EQ(Sample(families, "rail_check_info", {{"check", "port_active"}}), std::nullopt)
      << "passing checks have no info sample";
  const auto text = test::Serialize(families);
  EXPECT_THAT(text, HasSubstr("rail_check_info{check=\"mtu\",rail=\"rail1\",peer=\"\",reason=\"MTU "
                              "1500 on enP2p1s0f0np0 (class/net/enP2p1s0f0np0/mtu), while rail0 "
                              "use 9000\"} 1"));
  EXPECT_THAT(text, HasSubstr("# TYPE rail_check_ok gauge"));
  EXPECT_EQ(Sample(families, "rail_exporter_scrape_collector_success", {{"collector", "health"}}),
            1);
}

// A ucx_throughput run on rail0 at 8 Gbit/s: below half its 100 Gb/s port.
probe::ProbeResult SlowRun(const test::FakeClock& clock) {
  probe::ProbeResult result;
  result.kind = probe::ProbeKind::kUcxThroughput;
  result.peer = "b";
  result.rails = {"rail0"};
  result.success = true;
  result.finished_at = clock.WallNow();
  result.message_size_bytes = 1 << 20;
  result.throughput_bytes_per_second = 1e9;
  return result;
}

TEST_F(HealthCollectorTest, ProbeResultsBecomeVerdictsWhileCurrent) {
  auto result = SlowRun(clock_);
  result.peer_agent_version = "0.0.0-other";
  result.peer_ucx_version = "0.0";
  store_.Record(result, std::chrono::minutes(5));
  auto families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_check_ok",
                   {{"check", "probe_throughput"}, {"rail", "rail0"}, {"peer", "b"}}),
            0);
  EXPECT_EQ(Sample(families, "rail_check_ok", {{"check", "peer_version"}, {"peer", "b"}}), 0);

  clock_.Advance(std::chrono::minutes(16));  // three intervals later the result is stale
  families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_check_ok", {{"check", "probe_throughput"}}), std::nullopt);
  EXPECT_EQ(Sample(families, "rail_check_ok", {{"check", "peer_version"}, {"peer", "b"}}), 0)
      << "the peer's versions stay known";
}

TEST_F(HealthCollectorTest, AHeldBackCheckIsNeitherGreenNorRed) {
  auto result = SlowRun(clock_);
  result.spread = probe::RateSpread{10, 0.1e9, 2e9, 1e9, 0.7};  // a run that was noise
  store_.Record(result, std::chrono::minutes(5));
  const auto families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_check_ok",
                   {{"check", "probe_throughput"}, {"rail", "rail0"}, {"peer", "b"}}),
            std::nullopt);
  EXPECT_EQ(Sample(families, "rail_check_info", {{"check", "probe_throughput"}}), std::nullopt);
  EXPECT_EQ(Sample(families, "rail_check_held_back",
                   {{"check", "probe_throughput"}, {"rail", "rail0"}, {"peer", "b"}}),
            1);
  EXPECT_THAT(test::Serialize(families), HasSubstr("noise, not judged"));
}

}  // namespace
}  // namespace rail::collectors
