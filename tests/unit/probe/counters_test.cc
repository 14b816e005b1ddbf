#include "rail/probe/counters.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "rail/probe/own_runs.h"
#include "rail/sysfs/filesystem.h"

namespace rail::probe {
namespace {

RailCounterSample Sample(std::uint64_t transmit, std::uint64_t receive) {
  return {transmit, receive, true};
}

TEST(CounterDeltasTest, SharesOfTheProbedRails) {
  const RailCounterSnapshot before = {{"rail0", Sample(1000, 500)}, {"rail1", Sample(0, 0)}};
  const RailCounterSnapshot after = {{"rail0", Sample(4000, 900)}, {"rail1", Sample(1000, 10)}};
  std::uint64_t other = 99;
  const auto deltas = CounterDeltas(before, after, {"rail0", "rail1"}, &other);
  ASSERT_EQ(deltas.size(), 2u);
  EXPECT_EQ(deltas[0].transmit_bytes, 3000u);
  EXPECT_EQ(deltas[0].receive_bytes, 400u);
  EXPECT_DOUBLE_EQ(deltas[0].share, 0.75);
  EXPECT_DOUBLE_EQ(deltas[1].share, 0.25);
  EXPECT_EQ(other, 0u);
}

// A device reset mid-probe: the counter restarted from zero and reads what the rail carried
// since. That is the delta (Prometheus' increase() does the same), not zero and not a
// wrapped-around 2^64 - n, so the rail keeps a share and the other rail is not blamed.
TEST(CounterDeltasTest, CounterThatWentBackwardsCountsSinceTheReset) {
  const RailCounterSnapshot before = {{"rail0", Sample(1'000'000, 800'000)},
                                      {"rail1", Sample(5'000'000, 5'000'000)},
                                      {"idle", Sample(7'000, 7'000)}};
  const RailCounterSnapshot after = {{"rail0", Sample(2'000'000, 1'800'000)},
                                     {"rail1", Sample(1'000'000, 900'000)},
                                     {"idle", Sample(3'000, 3'000)}};
  std::uint64_t other = 0;
  const auto deltas = CounterDeltas(before, after, {"rail0", "rail1"}, &other);
  ASSERT_EQ(deltas.size(), 2u);
  EXPECT_EQ(deltas[1].rail, "rail1");
  EXPECT_EQ(deltas[1].transmit_bytes, 1'000'000u);
  EXPECT_EQ(deltas[1].receive_bytes, 900'000u);
  EXPECT_DOUBLE_EQ(deltas[0].share, 0.5);
  EXPECT_DOUBLE_EQ(deltas[1].share, 0.5);
  EXPECT_EQ(other, 3'000u) << "an unprobed rail that reset counts its bytes since the reset";
}

TEST(CounterDeltasTest, UnreadableCountersAreLeftOut) {
  const RailCounterSnapshot before = {{"rail0", Sample(0, 0)}, {"rail1", {}}};
  const RailCounterSnapshot after = {{"rail0", Sample(10, 10)}, {"rail1", Sample(5, 5)}};
  const auto deltas = CounterDeltas(before, after, {"rail0", "rail1"}, nullptr);
  ASSERT_EQ(deltas.size(), 1u);
  EXPECT_EQ(deltas[0].rail, "rail0");
  EXPECT_DOUBLE_EQ(deltas[0].share, 1.0);
}

ProbeRail PortRail(const std::string& device, const std::string& netdev) {
  ProbeRail rail;
  rail.name = "rail0";
  rail.rdma_device = device;
  rail.rdma_port = 1;
  rail.netdev = netdev;
  return rail;
}

// Soft-RoCE has no PMA: its rail's bytes are its netdev's, which carries every rxe packet.
TEST(RailCounterReaderTest, RxeRailsReadTheirNetdevsStatistics) {
  const sysfs::RootedFilesystem sys(std::string(RAIL_FIXTURES) + "/rxe-dual-rail/sys");
  const RailCounterReader reader(sys);
  const RailCounterSample sample = reader.Read(PortRail("rxe0", "eth0"));
  EXPECT_TRUE(sample.valid);
  EXPECT_EQ(sample.transmit_bytes, 88113452u);
  EXPECT_EQ(sample.receive_bytes, 71345518u);
}

// A NIC's port reads its PMA data counters (4-byte words); without them its netdev's counters,
// which leave RDMA traffic out, must not stand in.
TEST(RailCounterReaderTest, NicsReadTheirPmaCountersOnly) {
  const std::string spark = std::string(RAIL_FIXTURES) + "/spark-dual-rail/sys";
  const sysfs::RootedFilesystem sys(spark);
  const RailCounterReader reader(sys);
  ProbeRail rail = PortRail("rocep1s0f0", "enp1s0f0np0");
  std::string words;
  ASSERT_EQ(sys.ReadFile("class/infiniband/rocep1s0f0/ports/1/counters/port_xmit_data", &words), 0);
  const RailCounterSample sample = reader.Read(rail);
  EXPECT_TRUE(sample.valid);
  EXPECT_EQ(sample.transmit_bytes, std::stoull(words) * 4);
  rail.rdma_port = 2;  // no such port: no counters, and the netdev's do not count RDMA
  EXPECT_FALSE(reader.Read(rail).valid);
}

// Runs overlap when one was registered while the other was: each sees the other's rails, a run
// that ended before another began is not seen, and a run never lists its own rails.
TEST(OwnRunsTest, EachRunSeesTheRailsOfRunsThatOverlappedIt) {
  OwnRuns runs;
  auto first = std::make_unique<OwnRuns::Registration>(runs, std::vector<std::string>{"rail0"});
  { const OwnRuns::Registration gone(runs, {"rail2"}); }
  EXPECT_EQ(first->OverlappingRails(), (std::set<std::string>{"rail2"}));
  const OwnRuns::Registration second(runs, {"rail1"});
  first.reset();
  const OwnRuns::Registration third(runs, {"rail3"});
  EXPECT_EQ(second.OverlappingRails(), (std::set<std::string>{"rail0", "rail3"}));
  EXPECT_EQ(third.OverlappingRails(), (std::set<std::string>{"rail1"}));
}

TEST(OtherRailsTransmitBytesTest, SumsUnprobedRailsButOurs) {
  ProbeResult result;
  result.rails = {"rail0"};
  result.counters = {{"rail0", 5000, 0, 1}, {"rail1", 300, 0, 0}, {"rail2", 40, 0, 0}};
  EXPECT_EQ(OtherRailsTransmitBytes(result, {}), 340u);
  EXPECT_EQ(OtherRailsTransmitBytes(result, {"rail1"}), 40u);
}

}  // namespace
}  // namespace rail::probe
