// Two UcxProbeSides in one process over UCX's tcp transport: throughput, RTT, the lanes the
// endpoint reports, errors, and the responder's sleeping when idle. See ucx_test_network.h for
// the devices.
#include <algorithm>
#include <chrono>
#include <ostream>

#include "probe/ucx/blob.h"
#include "ucx_test_network.h"

namespace rail::probe {
namespace {

using std::chrono::milliseconds;
using testing::Network;
using testing::ProbePair;
using testing::TcpSpec;
using Pairs = std::vector<std::pair<std::string, std::string>>;

constexpr std::size_t kBufferBytes = 1 << 20;

ProbePair MakeSingleRailPair(std::size_t buffer_bytes = kBufferBytes) {
  return ProbePair(TcpSpec({Network().Device(0, 'a')}), TcpSpec({Network().Device(0, 'b')}),
                   buffer_bytes);
}

class UcxThroughput : public ::testing::TestWithParam<UcxOperation> {};

std::string OperationTestName(const ::testing::TestParamInfo<UcxOperation>& param_info) {
  return UcxOperationName(param_info.param);
}

TEST_P(UcxThroughput, MovesBytesAtAPositiveRate) {
  ProbePair pair = MakeSingleRailPair();
  ASSERT_TRUE(pair.connected);
  pair.StartServing();
  const ThroughputOutcome outcome =
      pair.initiator->RunThroughput(GetParam(), 256 * 1024, 8, milliseconds(300), nullptr);
  pair.StopServing();
  ASSERT_TRUE(outcome.ok()) << outcome.error_reason << ": " << outcome.error_message;
  EXPECT_GT(outcome.bytes, 0u);
  EXPECT_EQ(outcome.bytes, outcome.operations * 256 * 1024);
  EXPECT_GT(outcome.seconds, 0.25);
  EXPECT_GT(outcome.bytes_per_second(), 0);
  if (GetParam() == UcxOperation::kAm) {
    // The responder saw the messages of the timed phase and of the warm-up.
    EXPECT_GE(pair.responder->Counters().am_bytes, outcome.bytes);
  }
  EXPECT_EQ(pair.responder->Counters().errors, 0u) << pair.responder->Counters().last_error;
}

INSTANTIATE_TEST_SUITE_P(AllOperations, UcxThroughput,
                         ::testing::Values(UcxOperation::kPut, UcxOperation::kGet,
                                           UcxOperation::kAm),
                         OperationTestName);

TEST(UcxThroughputSmall, EagerActiveMessagesAreReceivedToo) {
  ProbePair pair = MakeSingleRailPair();
  ASSERT_TRUE(pair.connected);
  pair.StartServing();
  const ThroughputOutcome outcome =
      pair.initiator->RunThroughput(UcxOperation::kAm, 1024, 16, milliseconds(100), nullptr);
  pair.StopServing();
  ASSERT_TRUE(outcome.ok()) << outcome.error_reason << ": " << outcome.error_message;
  EXPECT_GT(outcome.bytes, 0u);
  EXPECT_GE(pair.responder->Counters().am_bytes, outcome.bytes);
}

TEST(UcxRtt, ReturnsRoundTripSamples) {
  ProbePair pair = MakeSingleRailPair();
  ASSERT_TRUE(pair.connected);
  pair.StartServing();
  for (const std::size_t size : {std::size_t{8}, std::size_t{4096}}) {
    const RttOutcome outcome = pair.initiator->RunRtt(size, milliseconds(200), 500, nullptr);
    ASSERT_TRUE(outcome.ok()) << outcome.error_reason << ": " << outcome.error_message;
    ASSERT_FALSE(outcome.samples_seconds.empty());
    EXPECT_LE(outcome.samples_seconds.size(), 500u);
    const auto [min, max] =
        std::minmax_element(outcome.samples_seconds.begin(), outcome.samples_seconds.end());
    EXPECT_GT(*min, 0);
    EXPECT_LE(*min, *max);
    EXPECT_LT(*max, 1.0);
  }
  pair.StopServing();
  EXPECT_GT(pair.responder->Counters().pings_echoed, 0u);
}

TEST(UcxRtt, StopsAtMaxSamples) {
  ProbePair pair = MakeSingleRailPair();
  ASSERT_TRUE(pair.connected);
  pair.StartServing();
  const RttOutcome outcome = pair.initiator->RunRtt(8, std::chrono::seconds(10), 25, nullptr);
  ASSERT_TRUE(outcome.ok()) << outcome.error_reason << ": " << outcome.error_message;
  EXPECT_EQ(outcome.samples_seconds.size(), 25u);
}

TEST(UcxLanes, OneDeviceContextUsesExactlyThatDeviceOverTcp) {
  ProbePair pair = MakeSingleRailPair();
  ASSERT_TRUE(pair.connected);
  std::string error;
  EXPECT_EQ(pair.initiator->LaneTransports(&error), (Pairs{{"tcp", Network().Device(0, 'a')}}))
      << error << "\n"
      << pair.initiator->EndpointInfoText();
  EXPECT_EQ(pair.responder->LaneTransports(&error), (Pairs{{"tcp", Network().Device(0, 'b')}}))
      << error;
}

TEST(UcxLanes, TwoDeviceContextListsBothDevices) {
  if (!Network().veth_rails) GTEST_SKIP() << "needs two rails: " << Network().why_no_rails;
  // UCX 1.13's tcp transport offers no zero-copy RMA lanes (rma_bw), so its rendezvous runs over
  // the AM bandwidth lanes, whose number is MAX_EAGER_RAILS (default 1), not MAX_RNDV_RAILS: a
  // tcp context over two rails needs both set to use both. (On rc_mlx5, MAX_RNDV_RAILS alone
  // adds rma_bw lanes.)
  UcxContextSpec initiator_spec = TcpSpec({Network().Device(0, 'a'), Network().Device(1, 'a')}, 2);
  UcxContextSpec responder_spec = TcpSpec({Network().Device(0, 'b'), Network().Device(1, 'b')}, 2);
  initiator_spec.extra_config["MAX_EAGER_RAILS"] = "2";
  responder_spec.extra_config["MAX_EAGER_RAILS"] = "2";
  ProbePair pair(initiator_spec, responder_spec, kBufferBytes);
  ASSERT_TRUE(pair.connected);
  std::string error;
  const Pairs lanes = pair.initiator->LaneTransports(&error);
  const std::string text = pair.initiator->EndpointInfoText();
  for (const std::string& device : {Network().Device(0, 'a'), Network().Device(1, 'a')}) {
    EXPECT_NE(
        std::find(lanes.begin(), lanes.end(), std::pair<std::string, std::string>("tcp", device)),
        lanes.end())
        << device << " missing; " << error << "\n"
        << text;
  }
  // And data really flows over such an endpoint.
  pair.StartServing();
  const ThroughputOutcome outcome =
      pair.initiator->RunThroughput(UcxOperation::kAm, 256 * 1024, 8, milliseconds(200), nullptr);
  EXPECT_TRUE(outcome.ok()) << outcome.error_reason << ": " << outcome.error_message;
  EXPECT_GT(outcome.bytes, 0u);
}

TEST(UcxErrors, ConnectWithAGarbageAddressFails) {
  auto side = testing::CreateSide(TcpSpec({Network().Device(0, 'a')}), 4096);
  ASSERT_TRUE(side);
  std::string reason;
  std::string message;
  EXPECT_FALSE(side->Connect("certainly not a worker address", &reason, &message));
  EXPECT_EQ(reason, "invalid_blob");
  EXPECT_FALSE(message.empty());
  // A real address with one payload byte flipped fails its checksum.
  std::string damaged = side->WorkerAddress();
  damaged.back() = static_cast<char>(damaged.back() ^ 0x5a);
  EXPECT_FALSE(side->Connect(damaged, &reason, &message));
  EXPECT_EQ(reason, "invalid_blob");
  // A remote key is no worker address.
  EXPECT_FALSE(side->Connect(side->PackedRkey(), &reason, &message));
  EXPECT_EQ(reason, "invalid_blob");
  // The side is still usable: nothing was connected.
  EXPECT_EQ(side->RunRtt(8, milliseconds(10), 1, nullptr).error_reason, "not_connected");
}

TEST(UcxErrors, CreateOverAMissingDeviceFailsWithAReason) {
  std::string reason;
  std::string message;
  auto side = UcxProbeSide::Create(TcpSpec({"no-such-dev0"}), 4096, &reason, &message);
  EXPECT_FALSE(side);
  EXPECT_TRUE(reason.starts_with("ucx:")) << reason;
  EXPECT_NE(message.find("no-such-dev0"), std::string::npos) << message;
}

TEST(UcxErrors, OperationsCheckTheirPreconditions) {
  ProbePair pair = MakeSingleRailPair(64 * 1024);
  ASSERT_TRUE(pair.connected);
  const ThroughputOutcome too_big =
      pair.initiator->RunThroughput(UcxOperation::kPut, 128 * 1024, 4, milliseconds(10), nullptr);
  EXPECT_EQ(too_big.error_reason, "invalid_argument");
  const ThroughputOutcome no_window =
      pair.initiator->RunThroughput(UcxOperation::kPut, 1024, 0, milliseconds(10), nullptr);
  EXPECT_EQ(no_window.error_reason, "invalid_argument");
  // RMA needs the peer's memory: the responder never got the initiator's.
  const ThroughputOutcome no_rkey =
      pair.responder->RunThroughput(UcxOperation::kGet, 1024, 4, milliseconds(10), nullptr);
  EXPECT_EQ(no_rkey.error_reason, "not_connected");
}

TEST(UcxErrors, CancelEndsAThroughputRun) {
  ProbePair pair = MakeSingleRailPair();
  ASSERT_TRUE(pair.connected);
  pair.StartServing();
  std::atomic<bool> cancel{false};
  std::thread canceller([&cancel] {
    std::this_thread::sleep_for(milliseconds(300));
    cancel = true;
  });
  const auto started = std::chrono::steady_clock::now();
  const ThroughputOutcome outcome = pair.initiator->RunThroughput(
      UcxOperation::kPut, 256 * 1024, 8, std::chrono::seconds(30), &cancel);
  canceller.join();
  EXPECT_EQ(outcome.error_reason, "cancelled") << outcome.error_message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

TEST(UcxErrors, AVanishedPeerMakesOperationsFailInsteadOfHanging) {
  ProbePair pair = MakeSingleRailPair();
  ASSERT_TRUE(pair.connected);
  pair.StartServing();
  ASSERT_TRUE(pair.initiator->RunRtt(8, milliseconds(20), 5, nullptr).ok());
  pair.StopServing();
  pair.responder.reset();
  pair.initiator->set_drain_timeout(std::chrono::seconds(2));
  const auto started = std::chrono::steady_clock::now();
  const RttOutcome outcome = pair.initiator->RunRtt(8, milliseconds(500), 100, nullptr);
  EXPECT_FALSE(outcome.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

TEST(UcxResponder, ServeReturnsPromptlyWhenStopIsSet) {
  auto side = testing::CreateSide(TcpSpec({Network().Device(0, 'b')}), 4096);
  ASSERT_TRUE(side);
  std::atomic<bool> stop{false};
  std::atomic<bool> returned{false};
  std::thread serving([&] {
    side->Serve(stop, milliseconds(1));
    returned = true;
  });
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_FALSE(returned);
  const auto stopped_at = std::chrono::steady_clock::now();
  stop = true;  // no Wake(): the poll interval alone must notice
  serving.join();
  EXPECT_LT(std::chrono::steady_clock::now() - stopped_at,
            UcxProbeSide::kIdlePollInterval + milliseconds(250));
}

TEST(UcxResponder, WakeInterruptsAnIdleServe) {
  auto side = testing::CreateSide(TcpSpec({Network().Device(0, 'b')}), 4096);
  ASSERT_TRUE(side);
  std::atomic<bool> stop{false};
  std::thread serving([&] { side->Serve(stop, milliseconds(1)); });
  std::this_thread::sleep_for(milliseconds(100));
  const auto stopped_at = std::chrono::steady_clock::now();
  stop = true;
  side->Wake();
  serving.join();
  EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, milliseconds(200));
}

// A functional check that an idle responder sleeps, not a benchmark: a busy-polling one would use
// about 1 s of CPU in 1 s.
TEST(UcxResponder, IdleResponderUsesAlmostNoCpu) {
  ProbePair pair = MakeSingleRailPair();
  ASSERT_TRUE(pair.connected);
  pair.StartServing(milliseconds(5));
  // Some traffic first, so that the responder has an endpoint and was busy once.
  ASSERT_TRUE(pair.initiator->RunRtt(8, milliseconds(20), 10, nullptr).ok());
  std::this_thread::sleep_for(milliseconds(100));
  // Measure the serving thread's CPU over 1 s of idleness: stop serving, restart, and compare.
  pair.StopServing();
  pair.stop = false;
  pair.StartServing(milliseconds(5));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  pair.StopServing();
  EXPECT_LT(pair.responder_cpu_seconds, 0.2);
}

TEST(UcxBlob, FramesAndChecksPayloads) {
  const std::string payload("\x00\x01\x02 worker", 10);
  const std::string blob = detail::FrameBlob('W', payload);
  std::string error;
  EXPECT_EQ(detail::UnframeBlob('W', blob, &error), payload) << error;
  EXPECT_FALSE(detail::UnframeBlob('K', blob, &error));
  EXPECT_FALSE(detail::UnframeBlob('W', blob.substr(0, blob.size() - 1), &error));
  EXPECT_FALSE(detail::UnframeBlob('W', blob + "x", &error));
  EXPECT_FALSE(detail::UnframeBlob('W', "", &error));
  EXPECT_EQ(detail::UnframeBlob('K', detail::FrameBlob('K', ""), &error), "");
}

TEST(ThreadCpuSeconds, GrowsWithWork) {
  const double before = ThreadCpuSeconds();
  volatile double sink = 0;
  for (int index = 0; index < 5'000'000; ++index) sink = sink + index * 0.5;
  EXPECT_GT(ThreadCpuSeconds(), before);
}

}  // namespace
}  // namespace rail::probe
