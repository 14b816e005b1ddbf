// The fabric evidence of a probe run: each probed rail's NIC counters (an `ethtool -S` dump that
// the test rewrites between the run's start and end), its port's hw_counters and its netdev's
// carrier_down_count, read at both ends; rises only, never a counter read at one end or reset.
#include "rail/probe/fabric_evidence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "support/fake_filesystem.h"

namespace rail::probe {
namespace {

using namespace std::chrono_literals;

const nic::FabricSample* Find(const RailFabricEvidence& evidence, const std::string& source) {
  for (const auto& reading : evidence.nic) {
    for (const auto& sample : reading.samples) {
      if (sample.source == source) return &sample;
    }
  }
  return nullptr;
}

nic::FabricSample Pause(unsigned priority, std::uint64_t microseconds) {
  return {nic::FabricCounter::kPfcPauseMicroseconds,
          nic::Direction::kRx,
          priority,
          nic::PciOperation::kNone,
          microseconds,
          "rx_prio" + std::to_string(priority) + "_pause_duration"};
}

TEST(FabricEvidenceTest, RisesOfCountersReadAtBothEndsOnly) {
  RailFabricSample before;
  before.at = std::chrono::steady_clock::time_point(10s);
  before.nic = {{"eth0", "mlx5_core", 3, {Pause(3, 1000), Pause(5, 900)}, true},
                {"eth9", "mlx5_core", 1, {Pause(3, 0)}, true}};
  before.counters = {{"hw_counters/out_of_sequence", 40}, {"carrier_down_count", 7}};
  RailFabricSample after = before;
  after.at = std::chrono::steady_clock::time_point(12500ms);
  after.nic[0].samples = {Pause(3, 951000), Pause(5, 100), Pause(4, 50)};
  after.nic.pop_back();  // eth9 gone before the end
  after.counters = {{"hw_counters/out_of_sequence", 45},
                    {"carrier_down_count", 7},
                    {"hw_counters/packet_seq_err", 3}};

  const RailFabricEvidence evidence = FabricEvidence("rail0", before, after);
  EXPECT_EQ(evidence.rail, "rail0");
  EXPECT_DOUBLE_EQ(evidence.seconds, 2.5);
  ASSERT_EQ(evidence.nic.size(), 1u) << "eth9 was read at the start only";
  ASSERT_NE(Find(evidence, "rx_prio3_pause_duration"), nullptr);
  EXPECT_EQ(Find(evidence, "rx_prio3_pause_duration")->value, 950000u);
  EXPECT_EQ(Find(evidence, "rx_prio5_pause_duration"), nullptr) << "went backwards: a reset";
  EXPECT_EQ(Find(evidence, "rx_prio4_pause_duration"), nullptr) << "listed at the end only";
  EXPECT_EQ(evidence.counters.at("hw_counters/out_of_sequence"), 5u);
  EXPECT_EQ(evidence.counters.at("carrier_down_count"), 0u) << "read and flat is 0";
  EXPECT_FALSE(evidence.counters.contains("hw_counters/packet_seq_err"));
  EXPECT_TRUE(evidence.Read());
  EXPECT_FALSE(FabricEvidence("rail0", {}, {}).Read());
}

class FabricEvidenceReaderTest : public ::testing::Test {
 protected:
  FabricEvidenceReaderTest() : sys_(std::string(RAIL_FIXTURES) + "/spark-dual-rail/sys") {
    rail_.name = "rail0";
    rail_.rdma_device = "rocep1s0f0";
    rail_.rdma_port = 1;
    rail_.netdev = "enp1s0f0np0";
    dumps_.AddFile("enp1s0f0np0.info", "driver: mlx5_core\n");
    Dump(93412, 1);
  }

  void Dump(std::uint64_t rx_prio3_pause_duration, std::uint64_t link_down_events) {
    dumps_.AddFile("enp1s0f0np0",
                   "NIC statistics:\n"
                   "     rx_bytes: 5\n"
                   "     rx_discards_phy: 17\n"
                   "     link_down_events_phy: " +
                       std::to_string(link_down_events) +
                       "\n"
                       "     outbound_pci_stalled_rd: 12\n"
                       "     rx_prio3_pause: 800\n"
                       "     rx_prio3_pause_duration: " +
                       std::to_string(rx_prio3_pause_duration) + "\n");
  }

  test::FakeFilesystem sys_;
  test::FakeFilesystem dumps_;
  ProbeRail rail_;
};

TEST_F(FabricEvidenceReaderTest, ReadsTheNicsAllowListThePortAndTheNetdev) {
  const nic::DumpStatisticsSource statistics(dumps_);
  const FabricEvidenceReader reader(sys_, &statistics);
  const RailFabricSample start = reader.Read(rail_);
  ASSERT_EQ(start.nic.size(), 1u);
  EXPECT_EQ(start.nic[0].driver, "mlx5_core");
  for (const auto& sample : start.nic[0].samples) {
    EXPECT_NE(sample.counter, nic::FabricCounter::kOutboundPciStalledPercent)
        << "a gauge's difference is no evidence";
  }
  EXPECT_EQ(start.nic[0].samples.size(), 4u);  // discards, link-down, pause frames, pause time
  std::string text;
  ASSERT_EQ(sys_.ReadFile("class/infiniband/rocep1s0f0/ports/1/hw_counters/out_of_sequence", &text),
            0);
  EXPECT_EQ(start.counters.at("hw_counters/out_of_sequence"), std::stoull(text));
  EXPECT_EQ(start.counters.at("carrier_down_count"), 2u);

  Dump(93412 + 500000, 3);
  sys_.AddFile("class/infiniband/rocep1s0f0/ports/1/hw_counters/out_of_sequence",
               std::to_string(std::stoull(text) + 9) + "\n");
  const RailFabricEvidence evidence = FabricEvidence("rail0", start, reader.Read(rail_));
  EXPECT_EQ(Find(evidence, "rx_prio3_pause_duration")->value, 500000u);
  EXPECT_EQ(Find(evidence, "link_down_events_phy")->value, 2u);
  EXPECT_EQ(Find(evidence, "rx_discards_phy")->value, 0u);
  EXPECT_EQ(evidence.counters.at("hw_counters/out_of_sequence"), 9u);
}

TEST_F(FabricEvidenceReaderTest, NothingToReadIsNoEvidence) {
  const nic::DumpStatisticsSource statistics(dumps_);
  const FabricEvidenceReader reader(sys_, &statistics);
  ProbeRail gone;
  gone.name = "rail9";
  gone.netdev = "eth9";  // no such netdev, no dump, no RDMA device
  EXPECT_FALSE(FabricEvidence("rail9", reader.Read(gone), reader.Read(gone)).Read());
}

// A bond lists no NIC statistics: its slaves' stand for it.
TEST_F(FabricEvidenceReaderTest, BondsReadTheirSlaves) {
  sys_.AddFile("class/net/bond0/bonding/slaves", "enp1s0f0np0 enp1s0f1np1\n");
  const nic::DumpStatisticsSource statistics(dumps_);
  const FabricEvidenceReader reader(sys_, &statistics);
  ProbeRail bond;
  bond.name = "rail0";
  bond.netdev = "bond0";
  const RailFabricSample sample = reader.Read(bond);
  ASSERT_EQ(sample.nic.size(), 1u) << "enp1s0f1np1 has no dump";
  EXPECT_EQ(sample.nic[0].netdev, "enp1s0f0np0");
}

}  // namespace
}  // namespace rail::probe
