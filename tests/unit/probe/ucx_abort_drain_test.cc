// An initiator whose put or get run is cut short must not take its responder down with it.
//
// Over tcp UCX 1.13 emulates put and get with active messages, and the responder's handlers
// answer each one (a put's completion, a get's reply). When the initiator closed its endpoint
// and destroyed its worker right after an abort, the responder, still serving, went on handling
// the operations queued in its socket, and its first answer into the closed connection aborted
// the responder's process ("ucp_request.inl:346 Fatal: unexpected error: Endpoint timeout" under
// ucp_put_handler). These tests recreate that sequence: cancel mid-run, destroy the initiator
// while the responder still serves. Without the drain on abort, put crashed the test binary in
// its first round, every time; get is here because its replies are sent the same way, although
// its small requests seldom queue up at the responder long enough to show it.
#include <atomic>
#include <chrono>
#include <ostream>
#include <thread>

#include "ucx_test_network.h"

namespace rail::probe {
namespace {

using std::chrono::milliseconds;
using testing::Network;
using testing::ProbePair;
using testing::TcpSpec;

constexpr std::size_t kMessageBytes = 1 << 20;
constexpr unsigned kWindow = 16;
constexpr int kRounds = 4;

class UcxAbortedRun : public ::testing::TestWithParam<UcxOperation> {};

TEST_P(UcxAbortedRun, TheResponderSurvivesTheInitiatorLeavingRightAfterAnAbort) {
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ProbePair pair(TcpSpec({Network().Device(0, 'a')}), TcpSpec({Network().Device(0, 'b')}),
                   kMessageBytes);
    ASSERT_TRUE(pair.connected);
    pair.StartServing();
    std::atomic<bool> cancel{false};
    std::thread canceller([&cancel] {
      std::this_thread::sleep_for(milliseconds(300));
      cancel = true;
    });
    const ThroughputOutcome outcome = pair.initiator->RunThroughput(
        GetParam(), kMessageBytes, kWindow, std::chrono::seconds(30), &cancel);
    canceller.join();
    EXPECT_EQ(outcome.error_reason, "cancelled") << outcome.error_message;
    // The abort let everything posted drain into the serving responder before closing (the
    // cancel itself may name the operations in flight at that moment: that is not the drain).
    EXPECT_EQ(outcome.error_message.find("when the endpoint was closed"), std::string::npos)
        << outcome.error_message;
    EXPECT_EQ(outcome.error_message.find("did not acknowledge"), std::string::npos)
        << outcome.error_message;
    EXPECT_FALSE(pair.initiator->connected());
    // The initiator's process goes away (its worker and sockets with it) while the responder
    // still serves: the responder must go on serving, not abort.
    pair.initiator.reset();
    std::this_thread::sleep_for(milliseconds(200));
    pair.StopServing();
    pair.responder.reset();
  }
}

INSTANTIATE_TEST_SUITE_P(RemoteMemoryOperations, UcxAbortedRun,
                         ::testing::Values(UcxOperation::kPut, UcxOperation::kGet),
                         [](const ::testing::TestParamInfo<UcxOperation>& param_info) {
                           return std::string(UcxOperationName(param_info.param));
                         });

// A peer that never takes anything cannot be drained: the abort gives up within its bounds and
// says so, instead of hanging.
TEST(UcxAbortedRunStalledPeer, TheDrainGivesUpWithinItsBounds) {
  ProbePair pair(TcpSpec({Network().Device(0, 'a')}), TcpSpec({Network().Device(0, 'b')}),
                 kMessageBytes);
  ASSERT_TRUE(pair.connected);
  // No StartServing: the responder's worker never progresses, so no wire-up completes either.
  pair.initiator->set_drain_timeout(milliseconds(300));
  const auto started = std::chrono::steady_clock::now();
  const ThroughputOutcome outcome = pair.initiator->RunThroughput(
      UcxOperation::kPut, kMessageBytes, kWindow, milliseconds(100), nullptr);
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(outcome.error_reason, "timeout") << outcome.error_message;
  EXPECT_NE(outcome.error_message.find("outstanding"), std::string::npos) << outcome.error_message;
  EXPECT_LT(elapsed, milliseconds(300) + UcxProbeSide::kAbortDrainLimit + milliseconds(500));
}

}  // namespace
}  // namespace rail::probe
