// The responder's bulk gate on a FakeClock: who is admitted, the retry hint, the overlap count.
#include "rail/peer/bulk_gate.h"

#include <gtest/gtest.h>

#include "support/fake_clock.h"

namespace rail::peer {
namespace {

using namespace std::chrono_literals;
using base::BulkConcurrency;

constexpr base::Duration kGrace = 500ms;

BulkRequest Request(std::string run, std::vector<std::string> rails, base::Duration expected = 1s) {
  return BulkRequest{std::move(run), std::move(rails), expected};
}

TEST(BulkGateTest, PerHostRefusesAnotherRunOnAnyRailWithTheRemainingTimeAsHint) {
  test::FakeClock clock;
  BulkGate gate(clock, BulkConcurrency::kPerHost, kGrace);
  base::Duration retry{};
  auto first = gate.TryEnter(Request("a run 1", {"rail0"}, 2s), &retry);
  ASSERT_TRUE(first);
  clock.Advance(500ms);
  EXPECT_FALSE(gate.TryEnter(Request("b run 1", {"rail1"}), &retry));
  EXPECT_EQ(retry, 1500ms + kGrace);  // 2 s expected, 0.5 s gone
  EXPECT_EQ(gate.Stats().busy_total, 1u);
}

TEST(BulkGateTest, AHolderPastItsExpectedEndStillHoldsAndHintsTheGrace) {
  test::FakeClock clock;
  BulkGate gate(clock, BulkConcurrency::kPerHost, kGrace);
  base::Duration retry{};
  auto first = gate.TryEnter(Request("a run 1", {"rail0"}, 1s), &retry);
  ASSERT_TRUE(first);
  clock.Advance(3s);
  EXPECT_FALSE(gate.TryEnter(Request("b run 1", {"rail0"}), &retry));
  EXPECT_EQ(retry, kGrace);
}

BulkRequest Latency(std::string run, std::vector<std::string> rails) {
  BulkRequest request = Request(std::move(run), std::move(rails), 500ms);
  request.latency = true;
  return request;
}

TEST(BulkGateTest, LatencyProbesShareTheScopeButNeverWithABulkTransfer) {
  test::FakeClock clock;
  BulkGate gate(clock, BulkConcurrency::kPerHost, kGrace);
  base::Duration retry{};
  auto rtt_a = gate.TryEnter(Latency("a run 1", {"rail0"}), &retry);
  auto rtt_b = gate.TryEnter(Latency("b run 1", {"rail1"}), &retry);
  ASSERT_TRUE(rtt_a);
  ASSERT_TRUE(rtt_b);
  EXPECT_FALSE(gate.TryEnter(Request("c run 1", {"rail1"}), &retry));  // round trips running
  EXPECT_EQ(retry, 500ms + kGrace);
  rtt_a.reset();
  rtt_b.reset();
  auto bulk = gate.TryEnter(Request("c run 1", {"rail1"}, 2s), &retry);
  ASSERT_TRUE(bulk);
  bulk->TransferStarted();
  EXPECT_FALSE(gate.TryEnter(Latency("a run 2", {"rail0"}), &retry));  // per host: any rail
  EXPECT_EQ(retry, 2s + kGrace);
  EXPECT_EQ(gate.Stats().busy_total, 2u);
  EXPECT_EQ(gate.Stats().transfers_total, 1u);  // latency probes are no bulk transfers
  EXPECT_EQ(gate.Stats().overlaps_total, 0u);
}

TEST(BulkGateTest, PerRailALatencyProbeWaitsOnlyForABulkTransferOnItsRail) {
  test::FakeClock clock;
  BulkGate gate(clock, BulkConcurrency::kPerRail, kGrace);
  base::Duration retry{};
  auto bulk = gate.TryEnter(Request("a run 1", {"rail0"}), &retry);
  ASSERT_TRUE(bulk);
  EXPECT_FALSE(gate.TryEnter(Latency("b run 1", {"rail0"}), &retry));
  EXPECT_TRUE(gate.TryEnter(Latency("b run 2", {"rail1"}), &retry));
}

TEST(BulkGateTest, ReleasingThePassAdmitsTheNextRun) {
  test::FakeClock clock;
  BulkGate gate(clock, BulkConcurrency::kPerHost, kGrace);
  base::Duration retry{};
  {
    auto first = gate.TryEnter(Request("a run 1", {"rail0"}), &retry);
    ASSERT_TRUE(first);
    EXPECT_FALSE(gate.TryEnter(Request("b run 1", {"rail0"}), &retry));
  }
  EXPECT_TRUE(gate.TryEnter(Request("b run 1", {"rail0"}), &retry));
}

TEST(BulkGateTest, TheSessionsOfOneRunAreAdmittedTogether) {
  test::FakeClock clock;
  BulkGate gate(clock, BulkConcurrency::kPerHost, kGrace);
  base::Duration retry{};
  auto rail0 = gate.TryEnter(Request("a run 7", {"rail0"}), &retry);
  auto rail1 = gate.TryEnter(Request("a run 7", {"rail1"}), &retry);
  ASSERT_TRUE(rail0);
  ASSERT_TRUE(rail1);
  rail0->TransferStarted();
  rail1->TransferStarted();
  // Another run waits for both of them, and one ending is not enough.
  EXPECT_FALSE(gate.TryEnter(Request("b run 1", {"rail0"}), &retry));
  rail0.reset();
  EXPECT_FALSE(gate.TryEnter(Request("b run 1", {"rail0"}), &retry));
  rail1.reset();
  EXPECT_TRUE(gate.TryEnter(Request("b run 1", {"rail0"}), &retry));
  EXPECT_EQ(gate.Stats().transfers_total, 2u);
  EXPECT_EQ(gate.Stats().overlaps_total, 0u);  // one run's sessions are not an overlap
}

TEST(BulkGateTest, PerRailAdmitsOtherRailsAndRefusesTheSameRail) {
  test::FakeClock clock;
  BulkGate gate(clock, BulkConcurrency::kPerRail, kGrace);
  base::Duration retry{};
  auto first = gate.TryEnter(Request("a run 1", {"rail0"}), &retry);
  ASSERT_TRUE(first);
  auto other_rail = gate.TryEnter(Request("b run 1", {"rail1"}), &retry);
  EXPECT_TRUE(other_rail);
  EXPECT_FALSE(gate.TryEnter(Request("c run 1", {"rail0"}), &retry));
  // A multi-rail setup needs every one of its rails.
  EXPECT_FALSE(gate.TryEnter(Request("c run 2", {"rail2", "rail1"}), &retry));
  EXPECT_TRUE(gate.TryEnter(Request("c run 3", {"rail2"}), &retry));
}

TEST(BulkGateTest, AdmittedTransfersNeverCountAsOverlaps) {
  test::FakeClock clock;
  BulkGate gate(clock, BulkConcurrency::kPerRail, kGrace);
  base::Duration retry{};
  auto a = gate.TryEnter(Request("a run 1", {"rail0"}), &retry);
  auto b = gate.TryEnter(Request("b run 1", {"rail1"}), &retry);
  ASSERT_TRUE(a && b);
  a->TransferStarted();
  a->TransferStarted();  // once per pass
  b->TransferStarted();
  EXPECT_EQ(gate.Stats().transfers_total, 2u);
  EXPECT_EQ(gate.Stats().overlaps_total, 0u);
}

TEST(BulkGateTest, SplitRailsReadsTheSetupsRailField) {
  EXPECT_EQ(SplitRails("rail0"), (std::vector<std::string>{"rail0"}));
  EXPECT_EQ(SplitRails("rail0,rail1"), (std::vector<std::string>{"rail0", "rail1"}));
  EXPECT_EQ(SplitRails(",a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(SplitRails("").empty());
}

}  // namespace
}  // namespace rail::peer
