// The checks judged on counter deltas over a window (pfc_storm, pfc_pause, roce_drops, link_flaps,
// link_errors, roce_congestion_control) and nic_temperature, scrape after scrape on a fake clock:
// no verdict on the first sample, a failure when a counter rises within the window, a pass when it
// is high but flat, a reset, scrapes sparser than the window, PFC moved to another priority.
#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "rail/health/checks.h"
#include "support/fake_clock.h"

namespace rail::health {
namespace {

using namespace std::chrono_literals;
using Counters = std::map<std::string, std::uint64_t>;

class FabricHost {
 public:
  FabricHost() {
    inventory::Rail rail;
    rail.name = "rail0";
    rail.device = "mlx5_0";
    rail.port = 1;
    rail.netdev = "eth0";
    rail.link_layer = "Ethernet";
    rail.present = rail.active = true;
    rail.expected_rate_gbps = 100;  // the port's speed, for ratios to the bits on the wire
    rails_.push_back(rail);
    sysfs::InfinibandDevice device;
    device.name = "mlx5_0";
    device.ports.emplace_back();
    device.ports.back().number = 1;
    devices_.push_back(device);
    net_devices_.emplace_back();
    net_devices_.back().name = "eth0";
  }

  // One scrape: the NIC lists `ethtool` (mlx5 names), the netdev `carrier_down`, the port
  // `hw_counters`; then every check's verdicts named `check`.
  std::vector<CheckResult> Scrape(const std::string& check, const Counters& ethtool,
                                  const Counters& hw_counters = {},
                                  std::optional<std::uint64_t> carrier_down = std::nullopt) {
    nic::EthtoolStatistics statistics;
    for (const auto& [name, value] : ethtool) {
      statistics.names.push_back(name);
      statistics.values.push_back(value);
    }
    fabric_.clear();
    if (!ethtool.empty()) {
      inventory::RailFabric fabric{"rail0", {}};
      fabric.reading.netdev = "eth0";
      fabric.reading.driver = "mlx5_core";
      fabric.reading.samples = nic::MapFabricCounters("mlx5_core", statistics);
      fabric_.push_back(fabric);
    }
    devices_[0].ports[0].hw_counters = hw_counters;
    net_devices_[0].carrier_down_count = carrier_down;

    HealthInputs inputs;
    inputs.rails = &rails_;
    inputs.devices = &devices_;
    inputs.net_devices = &net_devices_;
    inputs.fabric = &fabric_;
    inputs.nic_temperatures = &temperatures;
    inputs.thresholds = thresholds;
    ObserveFabricForTest(inputs);
    inputs.history = &history_;
    std::vector<CheckResult> named;
    for (auto& result : EvaluateChecks(inputs)) {
      if (result.check == check) named.push_back(std::move(result));
    }
    return named;
  }

  void Advance(base::Duration by) { clock_.Advance(by); }

  Thresholds thresholds;
  std::vector<inventory::RailTemperature> temperatures;

 private:
  void ObserveFabricForTest(const HealthInputs& inputs);

  std::vector<inventory::Rail> rails_;
  std::vector<sysfs::InfinibandDevice> devices_;
  std::vector<sysfs::NetDevice> net_devices_;
  std::vector<inventory::RailFabric> fabric_;
  CounterHistory history_;
  rail::test::FakeClock clock_;
};

}  // namespace
}  // namespace rail::health

// The evidence recorder is internal to the health layer (src/health/fabric_evidence.h).
#include "health/fabric_evidence.h"

namespace rail::health {
namespace {

void FabricHost::ObserveFabricForTest(const HealthInputs& inputs) {
  detail::ObserveFabric(inputs, history_.Readings(), clock_.Now(), base::Duration::zero(),
                        history_);
}

const Counters kStormFree = {{"tx_pause_storm_warning_events", 4},
                             {"tx_pause_storm_error_events", 500}};

TEST(PfcStormTest, FirstSampleGivesNoVerdict) {
  FabricHost host;
  EXPECT_TRUE(host.Scrape("pfc_storm", kStormFree).empty());
}

TEST(PfcStormTest, ErrorEventsRisingWithinTheWindowFail) {
  FabricHost host;
  host.Scrape("pfc_storm", kStormFree);
  host.Advance(30s);
  const auto verdicts = host.Scrape(
      "pfc_storm", {{"tx_pause_storm_warning_events", 9}, {"tx_pause_storm_error_events", 502}});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_FALSE(verdicts[0].ok);
  EXPECT_NE(verdicts[0].reason.find("tx_pause_storm_error_events rose by 2 in the last 30s"),
            std::string::npos)
      << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("tx_pause_storm_warning_events by 5"), std::string::npos);
}

TEST(PfcStormTest, HighButFlatCountersPass) {
  FabricHost host;
  host.Scrape("pfc_storm", kStormFree);
  host.Advance(30s);
  const auto verdicts = host.Scrape("pfc_storm", kStormFree);
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_TRUE(verdicts[0].ok) << verdicts[0].reason;
}

TEST(PfcStormTest, ARiseOlderThanTheWindowIsForgotten) {
  FabricHost host;
  host.Scrape("pfc_storm", kStormFree);
  host.Advance(30s);
  const Counters risen = {{"tx_pause_storm_warning_events", 4},
                          {"tx_pause_storm_error_events", 501}};
  EXPECT_FALSE(host.Scrape("pfc_storm", risen).at(0).ok);
  for (int i = 0; i < 5; ++i) {
    host.Advance(60s);
    host.Scrape("pfc_storm", risen);
  }
  host.Advance(60s);
  EXPECT_TRUE(host.Scrape("pfc_storm", risen).at(0).ok);
}

TEST(PfcStormTest, ACounterGoingBackwardsIsAResetNotARise) {
  FabricHost host;
  host.Scrape("pfc_storm", kStormFree);
  host.Advance(30s);
  const Counters cleared = {{"tx_pause_storm_warning_events", 0},
                            {"tx_pause_storm_error_events", 0}};
  EXPECT_TRUE(host.Scrape("pfc_storm", cleared).empty()) << "no verdict right after a reset";
  host.Advance(30s);
  const auto after = host.Scrape("pfc_storm", cleared);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(after[0].ok);
}

TEST(PfcStormTest, ScrapesSparserThanTheWindowJudgeTheTimeSinceThePreviousOne) {
  FabricHost host;
  host.Scrape("pfc_storm", kStormFree);
  host.Advance(20min);
  const auto verdicts = host.Scrape(
      "pfc_storm", {{"tx_pause_storm_warning_events", 4}, {"tx_pause_storm_error_events", 501}});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_FALSE(verdicts[0].ok);
  EXPECT_NE(verdicts[0].reason.find("in the last 20m"), std::string::npos) << verdicts[0].reason;
}

TEST(PfcPauseTest, TransmitterHeldOnTheRocePriorityFails) {
  FabricHost host;
  host.Scrape("pfc_pause",
              {{"rx_prio3_pause_duration", 1000000000}, {"tx_prio3_pause_duration", 5}});
  host.Advance(60s);
  // 24 s of received pause in 60 s: 40%.
  const auto verdicts = host.Scrape(
      "pfc_pause", {{"rx_prio3_pause_duration", 1024000000}, {"tx_prio3_pause_duration", 5}});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_FALSE(verdicts[0].ok);
  EXPECT_NE(verdicts[0].reason.find("transmitter paused by its switch 40% of the last 1m on "
                                    "priority 3 (rx_prio3_pause_duration; above 10%)"),
            std::string::npos)
      << verdicts[0].reason;
}

TEST(PfcPauseTest, HighButFlatDurationPasses) {
  FabricHost host;
  const Counters paused_long_ago = {{"rx_prio3_pause_duration", 1000000000}};
  host.Scrape("pfc_pause", paused_long_ago);
  host.Advance(60s);
  EXPECT_TRUE(host.Scrape("pfc_pause", paused_long_ago).at(0).ok);
}

TEST(PfcPauseTest, PfcMovedToAnotherPriorityStartsThatPriorityAfresh) {
  FabricHost host;
  host.Scrape("pfc_pause", {{"rx_prio3_pause_duration", 1000000000}});
  host.Advance(60s);
  // Same number of statistics, other names: priority 5 has no history yet, priority 3 is gone.
  EXPECT_TRUE(host.Scrape("pfc_pause", {{"rx_prio5_pause_duration", 0}}).empty());
  host.Advance(60s);
  const auto verdicts = host.Scrape("pfc_pause", {{"rx_prio5_pause_duration", 30000000}});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_FALSE(verdicts[0].ok);
  EXPECT_NE(verdicts[0].reason.find("priority 5"), std::string::npos) << verdicts[0].reason;
}

TEST(RoceDropsTest, DiscardsOnTheLosslessPriorityFailOthersDoNot) {
  FabricHost host;
  Counters counters = {
      {"rx_prio3_pause", 1}, {"rx_prio3_buf_discard", 7}, {"rx_prio0_buf_discard", 9}};
  host.Scrape("roce_drops", counters);
  host.Advance(60s);
  counters["rx_prio0_buf_discard"] = 90;
  EXPECT_TRUE(host.Scrape("roce_drops", counters).at(0).ok) << "priority 0 is not lossless";
  host.Advance(60s);
  counters["rx_prio3_buf_discard"] = 8;
  const auto verdicts = host.Scrape("roce_drops", counters);
  EXPECT_FALSE(verdicts.at(0).ok);
  EXPECT_NE(verdicts[0].reason.find("rx_prio3_buf_discard rose by 1"), std::string::npos);
}

TEST(RoceRetransmissionsTest, OutOfSequenceRisingFailsAsLoss) {
  FabricHost host;
  host.Scrape("roce_retransmissions", {}, {{"out_of_sequence", 10}, {"packet_seq_err", 3}});
  host.Advance(60s);
  const auto verdicts =
      host.Scrape("roce_retransmissions", {}, {{"out_of_sequence", 15}, {"packet_seq_err", 3}});
  EXPECT_FALSE(verdicts.at(0).ok);
  EXPECT_NE(verdicts[0].reason.find("mlx5_0 port 1 out_of_sequence rose by 5 in the last 1m "
                                    "(loss: the responder received a packet out of sequence)"),
            std::string::npos)
      << verdicts[0].reason;
  EXPECT_EQ(verdicts[0].reason.find("packet_seq_err"), std::string::npos) << "it stayed flat";
  EXPECT_TRUE(host.Scrape("roce_drops", {}, {{"out_of_sequence", 15}}).empty())
      << "roce_drops judges the NIC's lossless-priority discards only";
}

TEST(RoceRetransmissionsTest, ABelowLimitRateAndFlatCountersPass) {
  FabricHost host;
  host.thresholds.roce_retransmissions_max_per_second = 1;
  host.Scrape("roce_retransmissions", {}, {{"local_ack_timeout_err", 100}});
  host.Advance(60s);
  // 30 timeouts in a minute: 0.5 per second, under the limit of 1.
  EXPECT_TRUE(host.Scrape("roce_retransmissions", {}, {{"local_ack_timeout_err", 130}}).at(0).ok);
  host.Advance(60s);
  EXPECT_FALSE(host.Scrape("roce_retransmissions", {}, {{"local_ack_timeout_err", 400}}).at(0).ok);
}

TEST(RoceCongestionControlTest, ReactionPointOffAndNotificationPointOff) {
  FabricHost host;
  host.thresholds.fabric_window = 60s;  // each step judged on its own minute
  Counters hw = {{"rp_cnp_ignored", 0}, {"np_ecn_marked_roce_packets", 100}, {"np_cnp_sent", 50}};
  host.Scrape("roce_congestion_control", {}, hw);
  host.Advance(60s);
  hw["np_ecn_marked_roce_packets"] = 200;
  hw["np_cnp_sent"] = 90;
  EXPECT_TRUE(host.Scrape("roce_congestion_control", {}, hw).at(0).ok);
  host.Advance(60s);
  hw["rp_cnp_ignored"] = 4;
  hw["np_ecn_marked_roce_packets"] = 300;
  const auto verdicts = host.Scrape("roce_congestion_control", {}, hw);
  EXPECT_FALSE(verdicts.at(0).ok);
  EXPECT_NE(verdicts[0].reason.find("reaction point is off"), std::string::npos);
  EXPECT_NE(verdicts[0].reason.find("notification point is off"), std::string::npos);
}

TEST(LinkFlapsTest, PhysicalLinkDownEventsArePreferredToCarrierChanges) {
  FabricHost host;
  host.Scrape("link_flaps", {{"link_down_events_phy", 3}}, {}, 10);
  host.Advance(60s);
  // An administrator's down/up: carrier_down_count rises, the physical link never went down.
  EXPECT_TRUE(host.Scrape("link_flaps", {{"link_down_events_phy", 3}}, {}, 11).at(0).ok);
  host.Advance(60s);
  const auto verdicts = host.Scrape("link_flaps", {{"link_down_events_phy", 4}}, {}, 11);
  EXPECT_FALSE(verdicts.at(0).ok);
  EXPECT_NE(verdicts[0].reason.find("link_down_events_phy"), std::string::npos);
}

TEST(LinkFlapsTest, CarrierDownCountWithoutNicCounters) {
  FabricHost host;
  host.Scrape("link_flaps", {}, {}, 2);
  host.Advance(60s);
  const auto verdicts = host.Scrape("link_flaps", {}, {}, 3);
  EXPECT_FALSE(verdicts.at(0).ok);
  EXPECT_NE(verdicts[0].reason.find("eth0 carrier_down_count"), std::string::npos);
}

// mlx5 counts no received bits: the ratio is taken against the port's speed (100 Gbit/s here, 6e12
// bits a minute), and the worst lane is named.
TEST(LinkErrorsTest, PostFecErrorsAndCorrectedBitRatioAgainstThePortSpeed) {
  FabricHost host;
  host.thresholds.fabric_window = 60s;  // each step judged on its own minute
  Counters counters = {{"rx_pcs_symbol_err_phy", 0},
                       {"rx_corrected_bits_phy", 1000},
                       {"rx_err_lane_0_phy", 0},
                       {"rx_err_lane_1_phy", 0}};
  host.Scrape("link_errors", counters);
  host.Advance(60s);
  counters["rx_corrected_bits_phy"] = 2000;  // 1e3 of 6e12 bits: 1.7e-10, fine
  EXPECT_TRUE(host.Scrape("link_errors", counters).at(0).ok);
  host.Advance(60s);
  counters["rx_corrected_bits_phy"] = 60002000;  // 6e7 of 6e12 bits: 1e-5
  counters["rx_err_lane_1_phy"] = 59000000;
  counters["rx_err_lane_0_phy"] = 1000000;
  counters["rx_pcs_symbol_err_phy"] = 2;
  const auto verdicts = host.Scrape("link_errors", counters);
  EXPECT_FALSE(verdicts.at(0).ok);
  const auto& reason = verdicts[0].reason;
  EXPECT_NE(reason.find("rx_pcs_symbol_err_phy rose by 2"), std::string::npos) << reason;
  EXPECT_NE(reason.find("corrected-bit ratio 1e-05 above 1e-06 (rx_corrected_bits_phy / the "
                        "port's 100 Gbit/s in the last 1m; worst lane 1 (rx_err_lane_1_phy))"),
            std::string::npos)
      << reason;
}

TEST(LinkErrorsTest, TheLanesStandForTheTotalWhereItIsMissing) {
  FabricHost host;
  Counters counters = {{"rx_err_lane_0_phy", 0}, {"rx_err_lane_3_phy", 0}};
  host.Scrape("link_errors", counters);
  host.Advance(60s);
  counters["rx_err_lane_3_phy"] = 600000000;  // 6e8 of 6e12: 1e-4
  const auto verdicts = host.Scrape("link_errors", counters);
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_FALSE(verdicts[0].ok);
  EXPECT_NE(verdicts[0].reason.find("corrected-bit ratio 0.0001"), std::string::npos)
      << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("the lanes' rx_err_lane_<n>_phy"), std::string::npos);
}

TEST(NicTemperatureTest, WithinTheMarginOfCriticalFails) {
  FabricHost host;
  EXPECT_TRUE(host.Scrape("nic_temperature", {}).empty()) << "no hwmon: no verdict";
  host.temperatures.push_back({"rail0", "hwmon2", {"temp1", "asic", 96.0, 105.0}});
  auto verdicts = host.Scrape("nic_temperature", {});
  EXPECT_FALSE(verdicts.at(0).ok);
  EXPECT_NE(verdicts[0].reason.find("hwmon2 temp1 (asic) at 96.0 °C, critical 105.0 °C"),
            std::string::npos)
      << verdicts[0].reason;
  host.temperatures[0].sensor.celsius = 70.0;
  EXPECT_TRUE(host.Scrape("nic_temperature", {}).at(0).ok);
}

}  // namespace
}  // namespace rail::health
