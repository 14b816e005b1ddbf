// The UCX kinds as the agent runs them: both halves in worker processes (rail/probe/worker.h),
// over the veth rails of ucx_test_network.h, which the workers inherit with the namespaces.
#include <signal.h>

#include <future>

#include "rail/probe/worker.h"
#include "ucx_probe_fixture.h"

namespace rail::probe::testing {
namespace {

using namespace std::chrono_literals;

class UcxThroughWorkerTest : public UcxProbeTest {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_VETH_RAILS();
    responder_worker_ = StartWorker({VethRail(0, 'b'), VethRail(1, 'b')}, nullptr);
    initiator_worker_ = StartWorker({VethRail(0, 'a'), VethRail(1, 'a')}, secret_);
    UcxProbeTest::SetUp();
  }

  std::unique_ptr<ProbeWorker> StartWorker(std::vector<ProbeRail> rails,
                                           std::shared_ptr<const peer::Secret> secret) {
    WorkerOptions options;
    options.executable = RAIL_PROBE_WORKER;
    options.init.secret = std::move(secret);
    options.init.agent_version = "worker-test";
    options.init.rails = std::move(rails);
    options.policy.first_backoff = 10ms;
    auto worker = std::make_unique<ProbeWorker>(std::move(options));
    std::string error;
    EXPECT_TRUE(worker->Start(&error)) << error;
    return worker;
  }

  peer::ProbeHandlerFactory Factory() override {
    return MakeProbeHandlerFactory({VethRail(0, 'b'), VethRail(1, 'b')},
                                   [this](ProbeKind kind, const std::vector<ProbeRail>& rails) {
                                     return MakeWorkerHandler(*responder_worker_, kind, rails);
                                   });
  }

  ProbeResult RunThroughWorker(const ProbeParams& params) {
    return WorkerProbeMaker(*initiator_worker_)(params.kind)->Run(params, context_);
  }

  void TearDown() override {
    if (responder_) responder_->Stop();  // before the worker its handlers call
  }

  std::unique_ptr<ProbeWorker> responder_worker_;
  std::unique_ptr<ProbeWorker> initiator_worker_;
};

TEST_F(UcxThroughWorkerTest, PutAndRttRunWithBothHalvesInWorkers) {
  ProbeParams put = Params(ProbeKind::kUcxThroughput);
  put.operation = UcxOperation::kPut;
  const ProbeResult throughput = RunThroughWorker(put);
  ASSERT_TRUE(throughput.success) << throughput.error_reason << ": " << throughput.error_message;
  EXPECT_GT(throughput.bytes, 0u);
  EXPECT_TRUE(HasLane(throughput, "tcp", "ux0a", "rail0"));
  EXPECT_FALSE(throughput.peer_ucx_version.empty());
  const ProbeResult rtt = RunThroughWorker(Params(ProbeKind::kUcxRtt));
  ASSERT_TRUE(rtt.success) << rtt.error_reason << ": " << rtt.error_message;
  ASSERT_TRUE(rtt.rtt.has_value());
  EXPECT_GT(rtt.rtt->count, 0u);
}

TEST_F(UcxThroughWorkerTest, ResponderWorkerDyingIsReportedAsThePeersCrash) {
  ProbeParams put = Params(ProbeKind::kUcxThroughput);
  put.duration = 3s;
  auto run = std::async(std::launch::async, [&] { return RunThroughWorker(put); });
  std::this_thread::sleep_for(800ms);
  ASSERT_EQ(::kill(responder_worker_->Status().pid, SIGABRT), 0);
  const ProbeResult lost = run.get();
  EXPECT_FALSE(lost.success);
  EXPECT_EQ(lost.error_reason, "peer_worker_crashed") << lost.error_message;
  // The responder's agent restarts its worker, and the next probe succeeds.
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (responder_worker_->Status().state != WorkerState::kRunning &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(responder_worker_->Status().restarts_by_reason.at("sigabrt"), 1u);
  const ProbeResult next = RunThroughWorker(Params(ProbeKind::kUcxThroughput));
  EXPECT_TRUE(next.success) << next.error_reason << ": " << next.error_message;
}

}  // namespace
}  // namespace rail::probe::testing
