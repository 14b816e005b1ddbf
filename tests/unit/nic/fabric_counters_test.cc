// The mapping tables on the recorded dumps: what is taken, with which labels, what is absent.
#include "rail/nic/fabric_counters.h"

#include <gtest/gtest.h>

#include "support/fixture_paths.h"

namespace rail::nic {
namespace {

using rail::test::kEthtoolDumps;

FabricReading Load(const std::string& dump) {
  sysfs::RootedFilesystem dumps(kEthtoolDumps);
  DumpStatisticsSource source(dumps);
  EthtoolStatistics statistics;
  EXPECT_EQ(source.Read(dump, &statistics), 0);
  FabricReading reading;
  reading.driver = source.Driver(dump).value_or("");
  reading.statistics = statistics.names.size();
  reading.samples = MapFabricCounters(reading.driver, statistics);
  return reading;
}

std::uint64_t Value(const FabricReading& reading, FabricCounter counter,
                    Direction direction = Direction::kNone,
                    std::optional<unsigned> priority = std::nullopt,
                    PciOperation operation = PciOperation::kNone) {
  const auto* sample = FindSample(reading, counter, direction, priority, operation);
  EXPECT_NE(sample, nullptr);
  return sample ? sample->value : 0;
}

TEST(FabricCountersTest, Mlx5PfcOnPriorityThree) {
  const auto reading = Load("connectx7-mlx5-pfc3");
  using enum FabricCounter;
  EXPECT_EQ(Value(reading, kPfcPauseFrames, Direction::kRx, 3), 184467u);
  EXPECT_EQ(Value(reading, kPfcPauseMicroseconds, Direction::kRx, 3), 93412u);
  EXPECT_EQ(Value(reading, kPfcPauseFrames, Direction::kTx, 3), 2214u);
  EXPECT_EQ(Value(reading, kPfcPauseTransitions, Direction::kRx, 3), 91224u);
  EXPECT_EQ(Value(reading, kPauseStormWarnings), 2u);
  EXPECT_EQ(Value(reading, kOutboundPciStalledPercent, Direction::kNone, std::nullopt,
                  PciOperation::kWrite),
            4u);
  EXPECT_EQ(Value(reading, kEcnMarkedPackets, Direction::kNone, 3), 81920u);
  EXPECT_EQ(FindSample(reading, kReceivedBits), nullptr) << "no released mlx5 counts them";
  EXPECT_EQ(Value(reading, kPriorityReceiveDiscards, Direction::kNone, 3), 17u);
  // Only priority 3 has PFC: no pause counter of another priority, and no XOFF->XON transitions
  // of transmitted pause (mlx5 counts received ones only).
  for (unsigned p = 0; p < 8; ++p) {
    if (p == 3) continue;
    EXPECT_EQ(FindSample(reading, kPfcPauseFrames, Direction::kRx, p), nullptr) << p;
    EXPECT_NE(FindSample(reading, kBufferDiscards, Direction::kNone, p), nullptr) << p;
  }
  EXPECT_EQ(FindSample(reading, kPfcPauseTransitions, Direction::kTx, 3), nullptr);
}

TEST(FabricCountersTest, Mlx5AllowListIsSmall) {
  const auto reading = Load("connectx7-mlx5-pfc3");
  // 5 PFC + 2 global pause frames + 2 storm + 24 per-priority discards/marks + 8 per-priority
  // discards + 2 discards + 4 PCIe + 1 link-down + 1 module unplug + 1 CRC + 1 symbol + 2 FEC + 4
  // lanes, out of 1,779 statistics. Global pause is off: no pause durations.
  EXPECT_EQ(reading.samples.size(), 57u);
  EXPECT_EQ(reading.statistics, 1779u);
}

TEST(FabricCountersTest, PfcMovedToAnotherPriorityKeepsTheCountButNotTheNames) {
  const auto before = Load("connectx7-mlx5-pfc3");
  const auto after = Load("connectx7-mlx5-pfc5");
  EXPECT_EQ(before.statistics, after.statistics);
  using enum FabricCounter;
  EXPECT_EQ(FindSample(after, kPfcPauseMicroseconds, Direction::kRx, 3), nullptr);
  const auto* moved = FindSample(after, kPfcPauseMicroseconds, Direction::kRx, 5);
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved->source, "rx_prio5_pause_duration");
}

TEST(FabricCountersTest, BnxtEnNamesItsOwnWay) {
  const auto reading = Load("bnxt_en");
  EXPECT_EQ(reading.driver, "bnxt_en");
  using enum FabricCounter;
  EXPECT_EQ(Value(reading, kPfcPauseFrames, Direction::kRx, 3), 52110u);
  EXPECT_EQ(Value(reading, kPfcPauseMicroseconds, Direction::kTx, 3), 502u);
  EXPECT_EQ(Value(reading, kLinkDownEvents), 2u);
  EXPECT_EQ(Value(reading, kFecCorrectedBits), 2048u);
  EXPECT_EQ(Value(reading, kGlobalPauseFrames, Direction::kRx), 0u);
  // Lists every priority's PFC counters (0 where PFC is off), and nothing mlx5-only; its
  // firmware's pause-flood count stands for mlx5's storm errors.
  EXPECT_NE(FindSample(reading, kPfcPauseFrames, Direction::kRx, 0), nullptr);
  EXPECT_EQ(Value(reading, kPauseStormErrors), 0u);
  EXPECT_EQ(FindSample(reading, kPauseStormWarnings), nullptr);
  EXPECT_EQ(Value(reading, kPortReceiveDiscards), 24u);
  EXPECT_EQ(Value(reading, kRingDiscards, Direction::kRx), 310u);
  EXPECT_EQ(FindSample(reading, kPfcPauseTransitions, Direction::kRx, 3), nullptr);
}

TEST(FabricCountersTest, UnknownDriverMapsNothing) {
  EthtoolStatistics statistics{{"rx_prio3_pause"}, {5}, 0, {}};
  EXPECT_TRUE(MapFabricCounters("veth", statistics).empty());
  EXPECT_FALSE(IsKnownDriver("veth"));
  EXPECT_TRUE(IsKnownDriver("mlx5_core"));
}

TEST(FabricCountersTest, GeneraliseNameWritesEveryNumberAsTheTablesDo) {
  std::vector<unsigned> numbers;
  EXPECT_EQ(GeneraliseName("rx_prio3_pause", &numbers), "rx_prio{n}_pause");
  EXPECT_EQ(numbers, std::vector<unsigned>{3});
  EXPECT_EQ(GeneraliseName("rx_1519_to_2047_bytes_phy", &numbers), "rx_{n}_to_{n}_bytes_phy");
  EXPECT_EQ(numbers, (std::vector<unsigned>{1519, 2047}));
  EXPECT_EQ(GeneraliseName("tx_priority_7_xoff.nic", &numbers), "tx_priority_{n}_xoff.nic");
  EXPECT_EQ(GeneraliseName("rx_bits", &numbers), "rx_bits");
  EXPECT_TRUE(numbers.empty());
  // Too long for an unsigned: not a number, kept as written.
  EXPECT_EQ(GeneraliseName("x99999999999999999999y", &numbers), "x99999999999999999999y");
}

TEST(FabricCountersTest, ANameListedTwiceIsMappedOnceAndReported) {
  EthtoolStatistics statistics{
      {"rx_discards_phy", "rx_prio3_pause", "rx_discards_phy", "rx_discards_phy", "a", "a"},
      {5, 1, 9, 11, 0, 0},
      0,
      {}};
  std::vector<std::string> repeated;
  const auto samples = MapFabricCounters("mlx5_core", statistics, &repeated);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].source, "rx_discards_phy");
  EXPECT_EQ(samples[0].value, 5u) << "the first occurrence is the one kept";
  EXPECT_EQ(repeated, std::vector<std::string>{"rx_discards_phy"})
      << "a name off the allow-list gives no series, listed once or twice";
}

TEST(FabricCountersTest, TwoNamesOfOneCounterKeepTheFirst) {
  // A driver listing a kernel's old and new name of the ring discards gives one sample.
  EthtoolStatistics both{{"rx_total_discard_pkts", "rx_total_ring_discards"}, {7, 9}, 0, {}};
  const auto samples = MapFabricCounters("bnxt_en", both);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].source, "rx_total_discard_pkts");
  EXPECT_EQ(samples[0].value, 7u);
}

TEST(FabricCountersTest, LanesAndQueuesCarryTheirIndex) {
  EthtoolStatistics mlx5{
      {"rx_err_lane_2_phy", "module_unplug", "rx_crc_errors_phy"}, {7, 1, 3}, 0, {}};
  const auto lanes = MapFabricCounters("mlx5_core", mlx5);
  ASSERT_EQ(lanes.size(), 3u);
  EXPECT_EQ(lanes[0].counter, FabricCounter::kLaneCorrectedBits);
  EXPECT_EQ(lanes[0].index, 2u);
  EXPECT_FALSE(lanes[0].priority);
  EXPECT_EQ(lanes[1].counter, FabricCounter::kModuleUnplugs);
  EXPECT_EQ(lanes[2].counter, FabricCounter::kCrcErrors);
  EthtoolStatistics bnxt{{"rx_discard_packets_cos5", "rx_total_ring_discards"}, {4, 6}, 0, {}};
  const auto queues = MapFabricCounters("bnxt_en", bnxt);
  ASSERT_EQ(queues.size(), 2u);
  EXPECT_EQ(queues[0].counter, FabricCounter::kQueueReceiveDiscards);
  EXPECT_EQ(queues[0].index, 5u);
  EXPECT_EQ(queues[1].counter, FabricCounter::kRingDiscards);
  EXPECT_EQ(queues[1].direction, Direction::kRx);
}

TEST(FabricCountersTest, IceCountsPauseInFramesPerPriority) {
  EthtoolStatistics ice{{"rx_priority_3_xoff.nic", "link_xoff_tx.nic", "rx_dropped.nic",
                         "rx_dropped", "rx_crc_errors.nic"},
                        {10, 2, 5, 7, 1},
                        0,
                        {}};
  const auto samples = MapFabricCounters("ice", ice);
  ASSERT_EQ(samples.size(), 4u) << "rx_dropped (a VSI's, host side) is not the port's";
  EXPECT_EQ(samples[0].counter, FabricCounter::kPfcPauseFrames);
  EXPECT_EQ(samples[0].priority, 3u);
  EXPECT_EQ(samples[1].counter, FabricCounter::kGlobalPauseFrames);
  EXPECT_EQ(samples[1].direction, Direction::kTx);
  EXPECT_EQ(samples[2].counter, FabricCounter::kPortReceiveDiscards);
  EXPECT_TRUE(IsKnownDriver("ice"));
}

TEST(FabricCountersTest, PriorityDigitsOutOfRangeAreNotPriorities) {
  EthtoolStatistics statistics{
      {"rx_prio8_pause", "rx_prio33_pause", "rx_prio7_pause"}, {1, 2, 3}, 0, {}};
  const auto samples = MapFabricCounters("mlx5_core", statistics);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].priority, 7u);
}

}  // namespace
}  // namespace rail::nic
