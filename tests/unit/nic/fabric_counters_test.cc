// The mapping tables on the recorded dumps: what is taken, with which labels, what is absent.
#include "rail/nic/fabric_counters.h"

#include <gtest/gtest.h>

namespace rail::nic {
namespace {

const std::string kDumps = std::string(RAIL_FIXTURES) + "/ethtool";

FabricReading Load(const std::string& dump) {
  sysfs::RootedFilesystem dumps(kDumps);
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
  EXPECT_EQ(Value(reading, kReceivedBits), 96000000000000u);
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
  // 5 PFC + 2 global pause + 2 storm + 24 per-priority discards/marks + 2 discards + 4 PCIe + 1
  // link-down + 3 FEC, out of about 1,500 statistics.
  EXPECT_EQ(reading.samples.size(), 43u);
  EXPECT_GT(reading.statistics, 1400u);
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
  // Lists every priority's PFC counters (0 where PFC is off), and nothing mlx5-only.
  EXPECT_NE(FindSample(reading, kPfcPauseFrames, Direction::kRx, 0), nullptr);
  EXPECT_EQ(FindSample(reading, kPauseStormErrors), nullptr);
  EXPECT_EQ(FindSample(reading, kPfcPauseTransitions, Direction::kRx, 3), nullptr);
}

TEST(FabricCountersTest, UnknownDriverMapsNothing) {
  EthtoolStatistics statistics{{"rx_prio3_pause"}, {5}};
  EXPECT_TRUE(MapFabricCounters("veth", statistics).empty());
  EXPECT_FALSE(IsKnownDriver("veth"));
  EXPECT_TRUE(IsKnownDriver("mlx5_core"));
}

TEST(FabricCountersTest, PriorityDigitsOutOfRangeAreNotPriorities) {
  EthtoolStatistics statistics{{"rx_prio8_pause", "rx_prio33_pause", "rx_prio7_pause"}, {1, 2, 3}};
  const auto samples = MapFabricCounters("mlx5_core", statistics);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].priority, 7u);
}

}  // namespace
}  // namespace rail::nic
