// Every fault class of the fabric checks on fixtures made from real `ethtool -S` dumps
// (tests/fixtures/ethtool/real/, one ConnectX-4 Lx, one Broadcom NetXtreme, one E810 port): the
// first scrape reads the dump as it is, the second a minute later with the fault's counters risen.
// The dumps' own values are high for some counters (the bnxt_en port has 655 M ring discards):
// read twice unchanged, every fabric check that can judge the port passes.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>

#include "health/fabric_evidence.h"
#include "rail/health/checks.h"
#include "rail/nic/ethtool.h"
#include "support/fake_clock.h"

namespace rail::health {
namespace {

using namespace std::chrono_literals;
using Counters = std::map<std::string, std::uint64_t>;

const std::string kReal = std::string(RAIL_FIXTURES) + "/ethtool/real/";

nic::EthtoolStatistics ReadDump(const std::string& name) {
  std::ifstream file(kReal + name);
  std::stringstream text;
  text << file.rdbuf();
  return nic::ParseEthtoolDump(text.str());
}

// A host with one 25G RoCE rail whose netdev's NIC printed `dump`.
class RealPort {
 public:
  RealPort(const std::string& dump, std::string driver)
      : statistics_(ReadDump(dump)), driver_(std::move(driver)) {
    inventory::Rail rail;
    rail.name = "rail0";
    rail.device = "roce0";
    rail.port = 1;
    rail.netdev = "eth0";
    rail.link_layer = "Ethernet";
    rail.present = rail.active = true;
    rail.expected_rate_gbps = 25;
    rails_.push_back(rail);
    sysfs::InfinibandDevice device;
    device.name = "roce0";
    device.ports.emplace_back();
    device.ports.back().number = 1;
    devices_.push_back(device);
    net_devices_.emplace_back();
    net_devices_.back().name = "eth0";
  }

  std::size_t Statistics() const { return statistics_.names.size(); }

  // One scrape: the dump with `raised` statistics added to, the port's `hw_counters`; then the
  // verdicts of every check.
  std::vector<CheckResult> Scrape(const Counters& raised = {}, const Counters& hw_counters = {}) {
    auto statistics = statistics_;
    for (const auto& [name, by] : raised) {
      bool found = false;
      for (std::size_t i = 0; i < statistics.names.size(); ++i) {
        if (statistics.names[i] != name) continue;
        statistics.values[i] += by;
        found = true;
      }
      EXPECT_TRUE(found) << name << " is not in the dump";
    }
    fabric_.clear();
    inventory::RailFabric fabric{"rail0", {}};
    fabric.reading.netdev = "eth0";
    fabric.reading.driver = driver_;
    fabric.reading.known_driver = true;
    fabric.reading.samples = nic::MapFabricCounters(driver_, statistics);
    fabric_.push_back(fabric);
    devices_[0].ports[0].hw_counters = hw_counters;

    HealthInputs inputs;
    inputs.rails = &rails_;
    inputs.devices = &devices_;
    inputs.net_devices = &net_devices_;
    inputs.fabric = &fabric_;
    inputs.thresholds = thresholds;
    detail::ObserveFabric(inputs, history_.Readings(), clock_.Now(), base::Duration::zero(),
                          history_);
    inputs.history = &history_;
    return EvaluateChecks(inputs);
  }

  void Advance(base::Duration by) { clock_.Advance(by); }

  Thresholds thresholds;

 private:
  nic::EthtoolStatistics statistics_;
  std::string driver_;
  std::vector<inventory::Rail> rails_;
  std::vector<sysfs::InfinibandDevice> devices_;
  std::vector<sysfs::NetDevice> net_devices_;
  std::vector<inventory::RailFabric> fabric_;
  CounterHistory history_;
  rail::test::FakeClock clock_;
};

const CheckResult* Find(const std::vector<CheckResult>& verdicts, const std::string& check) {
  for (const auto& verdict : verdicts) {
    if (verdict.check == check && verdict.rail == "rail0") return &verdict;
  }
  return nullptr;
}

struct Fault {
  const char* name;  // for the test's name
  const char* dump;
  const char* driver;
  Counters raised;                 // by how much each statistic rises within the minute
  Counters hw_before;              // the port's hw_counters at the first scrape
  Counters hw_after;               // ... and at the second
  const char* check;               // the check that must fail
  std::vector<const char*> words;  // what its reason must say
};

void PrintTo(const Fault& fault, std::ostream* out) {
  *out << fault.name;
}

class RealDumpFaultTest : public ::testing::TestWithParam<Fault> {};

TEST_P(RealDumpFaultTest, TheFaultFailsItsCheckNamingTheCounter) {
  const Fault& fault = GetParam();
  RealPort port(fault.dump, fault.driver);
  ASSERT_GT(port.Statistics(), 400u) << fault.dump << " did not parse";
  EXPECT_EQ(Find(port.Scrape({}, fault.hw_before), fault.check), nullptr)
      << "the first sample has nothing to compare with";
  port.Advance(60s);
  const auto verdicts = port.Scrape(fault.raised, fault.hw_after);
  const auto* verdict = Find(verdicts, fault.check);
  ASSERT_NE(verdict, nullptr) << fault.check << " gave no verdict";
  EXPECT_FALSE(verdict->ok);
  for (const char* word : fault.words) {
    EXPECT_NE(verdict->reason.find(word), std::string::npos)
        << "'" << word << "' missing from: " << verdict->reason;
  }
}

const char* kMlx5 = "mlx5-cx4lx-ubuntu1804-ethq";
const char* kBnxt = "bnxt_en-k66-ethq";
const char* kIce = "ice-2023-ethq";

INSTANTIATE_TEST_SUITE_P(
    Faults, RealDumpFaultTest,
    ::testing::Values(
        Fault{"Mlx5PortDiscards",
              kMlx5,
              "mlx5_core",
              {{"rx_discards_phy", 10'000'000}},
              {},
              {},
              "port_discards",
              {"rx_discards_phy rose by 10000000 in the last 1m"}},
        // The 4.15 dump predates rx_prio<p>_discards: the ConnectX-7 dump made from the 6.12 table.
        Fault{"Mlx5PortDiscardsPerPriority",
              "../connectx7-mlx5-pfc3",
              "mlx5_core",
              {{"rx_discards_phy", 1200}, {"rx_prio3_discards", 1200}},
              {},
              {},
              "port_discards",
              {"rx_discards_phy rose by 1200", "on priorities 3 (1200)"}},
        Fault{"Mlx5HostEthernetStarvation",
              kMlx5,
              "mlx5_core",
              {{"rx_out_of_buffer", 5'000'000}},
              {},
              {},
              "host_receive_starvation",
              {"a host fault, not the fabric's", "rx_out_of_buffer rose by 5000000",
               "kernel networking"}},
        Fault{"Mlx5RdmaReceiveNotPosted",
              kMlx5,
              "mlx5_core",
              {},
              {{"out_of_buffer", 7}},
              {{"out_of_buffer", 907}},
              "host_receive_starvation",
              {"roce0 port 1 out_of_buffer rose by 900", "posted no receive"}},
        Fault{"Mlx5GlobalPauseAllTheTime",
              kMlx5,
              "mlx5_core",
              {{"tx_global_pause_duration", 60'000'000}},
              {},
              {},
              "global_pause",
              {"sent 802.3x pause 100.0% of the last 1m", "tx_global_pause_duration"}},
        Fault{"Mlx5CrcErrors",
              kMlx5,
              "mlx5_core",
              {{"rx_crc_errors_phy", 12}},
              {},
              {},
              "link_errors",
              {"rx_crc_errors_phy rose by 12"}},
        Fault{"Mlx5SymbolErrors",
              kMlx5,
              "mlx5_core",
              {{"rx_symbol_err_phy", 3}},
              {},
              {},
              "link_errors",
              {"rx_symbol_err_phy rose by 3"}},
        // 1e8 corrected bits in a minute of a 25 Gbit/s port: a ratio of 6.7e-05.
        Fault{"Mlx5CorrectedBitsAgainstThePortSpeed",
              kMlx5,
              "mlx5_core",
              {{"rx_corrected_bits_phy", 100'000'000}},
              {},
              {},
              "link_errors",
              {"corrected-bit ratio 6.7e-05", "the port's 25 Gbit/s in the last 1m"}},
        Fault{"Mlx5ModuleUnplugged",
              kMlx5,
              "mlx5_core",
              {{"module_unplug", 1}},
              {},
              {},
              "link_flaps",
              {"transceiver unplugged 1 time(s)", "module_unplug"}},
        Fault{"Mlx5LinkFlaps",
              kMlx5,
              "mlx5_core",
              {{"link_down_events_phy", 3}},
              {},
              {},
              "link_flaps",
              {"link went down 3 time(s)", "link_down_events_phy"}},
        Fault{"Mlx5AckTimeouts",
              kMlx5,
              "mlx5_core",
              {},
              {{"local_ack_timeout_err", 10}},
              {{"local_ack_timeout_err", 52}},
              "roce_retransmissions",
              {"local_ack_timeout_err rose by 42", "timeout"}},
        Fault{"Mlx5RnrRetries",
              kMlx5,
              "mlx5_core",
              {},
              {{"rnr_nak_retry_err", 0}},
              {{"rnr_nak_retry_err", 2}},
              "roce_retransmissions",
              {"rnr_nak_retry_err rose by 2", "receiver not ready"}},
        Fault{"Mlx5ImpliedNaks",
              kMlx5,
              "mlx5_core",
              {},
              {{"implied_nak_seq_err", 1}},
              {{"implied_nak_seq_err", 5}},
              "roce_retransmissions",
              {"implied_nak_seq_err rose by 4", "loss"}},
        Fault{"RxeSequenceErrors",
              kMlx5,
              "mlx5_core",
              {},
              {{"rcvd_seq_err", 0}, {"duplicate_request", 0}},
              {{"rcvd_seq_err", 17}, {"duplicate_request", 3}},
              "roce_retransmissions",
              {"rcvd_seq_err rose by 17", "duplicate_request rose by 3"}},
        Fault{"BnxtPortDiscards",
              kBnxt,
              "bnxt_en",
              {{"rx_stat_discard", 1000}, {"rx_discard_packets_cos3", 1000}},
              {},
              {},
              "port_discards",
              {"rx_stat_discard rose by 1000", "on CoS queues 3 (1000)"}},
        Fault{"BnxtRingDiscards",
              kBnxt,
              "bnxt_en",
              {{"rx_total_ring_discards", 4000}},
              {},
              {},
              "host_receive_starvation",
              {"rx_total_ring_discards rose by 4000"}},
        Fault{"BnxtUncorrectableFec",
              kBnxt,
              "bnxt_en",
              {{"rx_fec_uncorrectable_blocks", 3}},
              {},
              {},
              "link_errors",
              {"rx_fec_uncorrectable_blocks rose by 3"}},
        Fault{"BnxtFcsErrors",
              kBnxt,
              "bnxt_en",
              {{"rx_fcs_err_frames", 8}},
              {},
              {},
              "link_errors",
              {"rx_fcs_err_frames rose by 8"}},
        Fault{"BnxtCorrectedBitsAgainstItsBitCounter",
              kBnxt,
              "bnxt_en",
              {{"rx_corrected_bits", 5'000'000}, {"rx_bits", 1'000'000'000}},
              {},
              {},
              "link_errors",
              {"corrected-bit ratio 0.005", "rx_corrected_bits / rx_bits"}},
        Fault{"BnxtRocePauseFlood",
              kBnxt,
              "bnxt_en",
              {{"continuous_roce_pause_events", 1}},
              {},
              {},
              "pfc_storm",
              {"continuous_roce_pause_events rose by 1"}},
        Fault{"BnxtGlobalPauseFrames",
              kBnxt,
              "bnxt_en",
              {{"rx_pause_frames", 120'000}},
              {},
              {},
              "global_pause",
              {"received 2000 802.3x pause frames per second", "rx_pause_frames"}},
        Fault{"IcePortDiscards",
              kIce,
              "ice",
              {{"rx_dropped.nic", 77}},
              {},
              {},
              "port_discards",
              {"rx_dropped.nic rose by 77"}},
        Fault{"IceGlobalPauseFrames",
              kIce,
              "ice",
              {{"link_xoff_rx.nic", 60'000}},
              {},
              {},
              "global_pause",
              {"received 1000 802.3x pause frames", "link_xoff_rx.nic"}},
        Fault{"IcePfcPauseByFrames",
              kIce,
              "ice",
              {{"rx_priority_3_xoff.nic", 90'000}},
              {},
              {},
              "pfc_pause",
              {"1500 pause frames per second", "priority 3",
               "ice counts pause frames, not pause time"}},
        Fault{"IceCrcErrors",
              kIce,
              "ice",
              {{"rx_crc_errors.nic", 2}},
              {},
              {},
              "link_errors",
              {"rx_crc_errors.nic rose by 2"}}),
    [](const ::testing::TestParamInfo<Fault>& fault) { return std::string(fault.param.name); });

// The fabric checks that judge the NIC's counters.
constexpr const char* kNicChecks[] = {"port_discards", "host_receive_starvation",
                                      "link_errors",   "link_flaps",
                                      "global_pause",  "pfc_pause",
                                      "pfc_storm"};

struct Flat {
  const char* dump;
  const char* driver;
  std::vector<const char*> judged;  // the checks the port's counters can judge
};

class RealDumpFlatTest : public ::testing::TestWithParam<Flat> {};

TEST_P(RealDumpFlatTest, HighButFlatCountersPass) {
  RealPort port(GetParam().dump, GetParam().driver);
  port.Scrape();
  port.Advance(60s);
  const auto verdicts = port.Scrape();
  for (const char* check : GetParam().judged) {
    const auto* verdict = Find(verdicts, check);
    ASSERT_NE(verdict, nullptr) << check << " gave no verdict";
    EXPECT_TRUE(verdict->ok) << check << ": " << verdict->reason;
  }
  for (const char* check : kNicChecks) {
    if (const auto* verdict = Find(verdicts, check)) {
      EXPECT_TRUE(verdict->ok) << verdict->reason;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ports, RealDumpFlatTest,
    ::testing::Values(
        Flat{kMlx5,
             "mlx5_core",
             {"port_discards", "host_receive_starvation", "link_errors", "link_flaps",
              "global_pause"}},
        Flat{kBnxt,
             "bnxt_en",
             {"port_discards", "host_receive_starvation", "link_errors", "link_flaps",
              "global_pause", "pfc_storm"}},
        Flat{kIce, "ice", {"port_discards", "link_errors", "global_pause", "pfc_pause"}}));

}  // namespace
}  // namespace rail::health
