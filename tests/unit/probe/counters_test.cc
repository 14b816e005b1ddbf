#include "rail/probe/counters.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rail::probe
