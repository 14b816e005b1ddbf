#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "rail/peer/client.h"
#include "rail/peer/responder.h"
#include "rail/peer/session_messages.h"
#include "rail/probe/handler_factory.h"
#include "rail/probe/in_process.h"
#include "rail/probe/own_runs.h"
#include "rail/probe/probe.h"
#include "rail/probe/tcp.h"
#include "rail/sysfs/filesystem.h"
#include "support/deadline.h"

namespace rail::probe {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

ProbeRail LoopbackRail(const std::string& name = "r0") {
  ProbeRail rail;
  rail.name = name;
  rail.ucx_device = "lo";
  rail.netdev = "lo";
  rail.ipv4 = "127.0.0.1";
  rail.expect_rdma = false;
  return rail;
}

// Counters that grow by a fixed step on every read, per netdev: a stand-in for sysfs that
// shows which rails the cross-check reads and reports.
class CountingFilesystem final : public sysfs::Filesystem {
 public:
  int ReadFile(std::string_view path, std::string* contents) const override {
    const std::lock_guard lock(mutex_);
    const std::string key(path);
    if (key.find("missing") != std::string::npos) return ENOENT;
    std::uint64_t& value = values_[key];
    value += key.find("slave1") != std::string::npos ? 1000 : 10;
    *contents = std::to_string(value) + "\n";
    return 0;
  }
  int ListDirectory(std::string_view, std::vector<std::string>*) const override { return ENOENT; }
  bool IsDirectory(std::string_view) const override { return false; }
  bool Exists(std::string_view) const override { return false; }

 private:
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::uint64_t> values_;
};

class TcpProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    peer::ResponderOptions options;
    options.listen_host = "127.0.0.1";
    options.port = 0;
    options.secret = secret_;
    options.versions = {"responder-1.0", "1.13.1"};
    options.probe_grace = 2s;
    responder_ =
        std::make_unique<peer::Responder>(options, MakeProbeHandlerFactory({LoopbackRail("r0")}));
    std::string error;
    ASSERT_TRUE(responder_->Start(&error)) << error;
    context_.connect = peer::MakePeerConnector(secret_, {"initiator-1.0", "1.12.0"}, nonces_);
    context_.counters = &counter_reader_;
  }

  ProbeParams Params(ProbeKind kind) const {
    ProbeParams params;
    params.kind = kind;
    params.peer = "127.0.0.1:" + std::to_string(responder_->ListeningPort());
    params.rails = {LoopbackRail("r0")};
    params.duration = 300ms;
    params.timeout = 5s;
    return params;
  }

  std::shared_ptr<const peer::Secret> secret_ =
      std::make_shared<const peer::Secret>("probe secret");
  base::SteadyClock clock_;
  peer::ReplayCache nonces_{clock_, 1024, std::chrono::minutes(10)};
  sysfs::RootedFilesystem sys_{"/sys"};
  RailCounterReader counter_reader_{sys_};
  ProbeContext context_;
  std::unique_ptr<peer::Responder> responder_;
};

void ExpectThroughput(const ProbeResult& result, unsigned streams, std::uint64_t buffer_bytes) {
  ASSERT_TRUE(result.success) << result.error_reason << ": " << result.error_message;
  EXPECT_EQ(result.kind, ProbeKind::kTcpThroughput);
  EXPECT_GT(result.bytes, 0u);
  EXPECT_GT(result.throughput_bytes_per_second, 0);
  EXPECT_GT(result.seconds, 0.1);
  // The receiver counted what the senders' send() calls accepted, to within one send buffer.
  const auto difference = result.bytes_sent > result.bytes ? result.bytes_sent - result.bytes
                                                           : result.bytes - result.bytes_sent;
  EXPECT_LE(difference, buffer_bytes * streams) << result.bytes_sent << " vs " << result.bytes;
  EXPECT_EQ(result.peer_agent_version, "responder-1.0");
  ASSERT_TRUE(result.peer_cpu_seconds);
  EXPECT_GT(*result.peer_cpu_seconds, 0);
  EXPECT_GT(result.local_cpu_seconds, 0);
  ASSERT_FALSE(result.counters.empty());
  EXPECT_EQ(result.counters[0].rail, "r0");
  // Loopback counts each byte once on transmit and once on receive.
  EXPECT_GE(result.counters[0].transmit_bytes, result.bytes);
  ::testing::Test::RecordProperty("throughput_bytes_per_second",
                                  std::to_string(result.throughput_bytes_per_second));
}

TEST_F(TcpProbeTest, ThroughputOneStream) {
  ProbeParams params = Params(ProbeKind::kTcpThroughput);
  params.message_sizes_bytes = {128 * 1024};
  const ProbeResult result = MakeProbe(ProbeKind::kTcpThroughput)->Run(params, context_);
  ExpectThroughput(result, 1, 128 * 1024);
  EXPECT_EQ(result.message_size_bytes, 128u * 1024);
}

// A rail whose link went down 0.1 s into a 6 s run: the receiver saw bytes for 0.1 s, the
// sender tried for 6 s. The run is measured over the 6 s, so its throughput shows the stall.
TEST(TcpThroughputSeconds, StalledRunIsMeasuredOverTheSendersTime) {
  EXPECT_DOUBLE_EQ(TcpThroughputSeconds(0.1, 6.0), 6.0);
}

TEST(TcpThroughputSeconds, HealthyRunIsMeasuredOverTheReceiversWindow) {
  // The receiver's last byte comes after the sender's last send() returned.
  EXPECT_DOUBLE_EQ(TcpThroughputSeconds(6.002, 6.0), 6.002);
  EXPECT_DOUBLE_EQ(TcpThroughputSeconds(0, 6.0), 6.0) << "no report of the receiver's window";
}

TEST_F(TcpProbeTest, ABusyResponderIsBusyWithItsHintNotAFailureOfTheRail) {
  // A responder that gates tcp_throughput, held by another initiator's run.
  peer::ResponderOptions options;
  options.listen_host = "127.0.0.1";
  options.port = 0;
  options.secret = secret_;
  options.versions = {"responder-1.0", "1.13.1"};
  options.is_bulk_kind = [](const std::string& kind) { return kind == "tcp_throughput"; };
  peer::Responder gated(options, MakeProbeHandlerFactory({LoopbackRail("r0")}));
  std::string error;
  ASSERT_TRUE(gated.Start(&error)) << error;
  const std::string address = "127.0.0.1:" + std::to_string(gated.ListeningPort());
  peer::NetError net_error;
  auto holder = context_.connect(address, 2s, &net_error.reason, &net_error.message);
  ASSERT_NE(holder, nullptr) << net_error.message;
  peer::ProbeSetup setup;
  setup.kind = "tcp_throughput";
  setup.rail = "r0";
  setup.message_sizes_bytes = {131072};
  setup.duration_seconds = 2;
  setup.max_bytes = 1 << 20;
  setup.run_id = "another-initiator";
  ASSERT_TRUE(holder->Request(ToJson(setup), rail::test::In(2s), &net_error)) << net_error.message;

  ProbeParams params = Params(ProbeKind::kTcpThroughput);
  params.peer = address;
  const ProbeResult result = MakeProbe(ProbeKind::kTcpThroughput)->Run(params, context_);
  EXPECT_TRUE(IsBusy(result)) << result.error_reason << ": " << result.error_message;
  EXPECT_GT(result.retry_after, 0ms);
  EXPECT_LE(result.retry_after, 2s + peer::Limits{}.bulk_retry_grace);
  ASSERT_TRUE(holder->Request(ToJson(peer::ProbeDone{}), rail::test::In(5s), &net_error))
      << net_error.message;
}

TEST_F(TcpProbeTest, ThroughputFourStreams) {
  ProbeParams params = Params(ProbeKind::kTcpThroughput);
  params.streams = 4;
  params.message_sizes_bytes = {64 * 1024};
  const ProbeResult result = MakeProbe(ProbeKind::kTcpThroughput)->Run(params, context_);
  ExpectThroughput(result, 4, 64 * 1024);
  // The responder counts the probe just after sending its report.
  const auto deadline = Clock::now() + 2s;
  while (responder_->Snapshot().probes_total == 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(responder_->Snapshot().probes_total, 1u);
}

TEST_F(TcpProbeTest, RttSummariesAreOrdered) {
  ProbeParams params = Params(ProbeKind::kTcpRtt);
  params.message_sizes_bytes = {8};
  const ProbeResult result = MakeProbe(ProbeKind::kTcpRtt)->Run(params, context_);
  ASSERT_TRUE(result.success) << result.error_reason << ": " << result.error_message;
  ASSERT_TRUE(result.rtt);
  EXPECT_GT(result.rtt->count, 10u);
  EXPECT_EQ(result.rtt->count, result.rtt_samples_seconds.size());
  EXPECT_GT(result.rtt->min, 0);
  EXPECT_LE(result.rtt->min, result.rtt->p50);
  EXPECT_LE(result.rtt->p50, result.rtt->p99);
  EXPECT_LE(result.rtt->p99, result.rtt->max);
  EXPECT_LT(result.rtt->p50, 0.05);  // loopback
  EXPECT_EQ(result.message_size_bytes, 8u);
  EXPECT_TRUE(result.peer_cpu_seconds);
}

TEST_F(TcpProbeTest, RttWithLargerMessages) {
  ProbeParams params = Params(ProbeKind::kTcpRtt);
  params.message_sizes_bytes = {4096};
  params.duration = 100ms;
  const ProbeResult result = MakeProbe(ProbeKind::kTcpRtt)->Run(params, context_);
  ASSERT_TRUE(result.success) << result.error_reason << ": " << result.error_message;
  EXPECT_EQ(result.bytes % 4096, 0u);
}

TEST_F(TcpProbeTest, DeadPeerIsRefused) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);  // nothing listens there now
  for (ProbeKind kind : {ProbeKind::kTcpThroughput, ProbeKind::kTcpRtt}) {
    ProbeParams params = Params(kind);
    params.peer = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
    const ProbeResult result = MakeProbe(kind)->Run(params, context_);
    EXPECT_FALSE(result.success);
    EXPECT_EQ(result.error_reason, "refused") << result.error_message;
    EXPECT_FALSE(result.error_message.empty());
  }
}

TEST_F(TcpProbeTest, SilentPeerTimesOutWithinTheTimeout) {
  // Accepts connections (the kernel completes them into the backlog) and never answers.
  base::UniqueFd listener(socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(listener.get(), 4), 0);
  socklen_t length = sizeof(address);
  getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length);
  for (ProbeKind kind : {ProbeKind::kTcpThroughput, ProbeKind::kTcpRtt}) {
    ProbeParams params = Params(kind);
    params.peer = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
    params.timeout = 400ms;
    const auto start = Clock::now();
    const ProbeResult result = MakeProbe(kind)->Run(params, context_);
    const auto elapsed = Clock::now() - start;
    EXPECT_FALSE(result.success);
    EXPECT_EQ(result.error_reason, "timeout") << result.error_message;
    EXPECT_GE(elapsed, 400ms);
    EXPECT_LT(elapsed, 700ms);
  }
}

TEST_F(TcpProbeTest, WrongSecretIsAuth) {
  peer::ReplayCache other_nonces{clock_, 16, std::chrono::minutes(1)};
  context_.connect = peer::MakePeerConnector(std::make_shared<const peer::Secret>("wrong"),
                                             {"initiator-1.0", "1.12.0"}, other_nonces);
  const ProbeResult result =
      MakeProbe(ProbeKind::kTcpRtt)->Run(Params(ProbeKind::kTcpRtt), context_);
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "auth");
}

TEST_F(TcpProbeTest, UnknownRailIsRefusedByThePeer) {
  ProbeParams params = Params(ProbeKind::kTcpRtt);
  params.rails = {LoopbackRail("no_such_rail")};
  const ProbeResult result = MakeProbe(ProbeKind::kTcpRtt)->Run(params, context_);
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "unknown_kind") << result.error_message;
}

TEST_F(TcpProbeTest, InvalidParamsAreRefusedLocally) {
  ProbeParams params = Params(ProbeKind::kTcpThroughput);
  params.streams = 0;
  EXPECT_EQ(MakeProbe(ProbeKind::kTcpThroughput)->Run(params, context_).error_reason,
            "invalid_argument");
  params = Params(ProbeKind::kTcpRtt);
  params.rails.clear();
  EXPECT_EQ(MakeProbe(ProbeKind::kTcpRtt)->Run(params, context_).error_reason, "invalid_argument");
}

TEST_F(TcpProbeTest, CountersOfOtherRailsAreReportedPerRail) {
  // A bond probed over loopback, its two slaves passed as further rails of this host.
  const CountingFilesystem fake_sys;
  const RailCounterReader fake_reader(fake_sys);
  context_.counters = &fake_reader;
  ProbeRail bond = LoopbackRail("r0");
  ProbeRail slave0 = LoopbackRail("slave0");
  slave0.netdev = "slave0";
  ProbeRail slave1 = LoopbackRail("slave1");
  slave1.netdev = "slave1";
  ProbeRail missing = LoopbackRail("gone");
  missing.netdev = "missing";
  context_.all_rails = {bond, slave0, slave1, missing};
  ProbeParams params = Params(ProbeKind::kTcpRtt);
  params.duration = 100ms;
  const ProbeResult result = MakeProbe(ProbeKind::kTcpRtt)->Run(params, context_);
  ASSERT_TRUE(result.success) << result.error_message;
  ASSERT_EQ(result.counters.size(), 3u);
  EXPECT_EQ(result.counters[0].rail, "r0");
  EXPECT_EQ(result.counters[0].share, 1.0);
  EXPECT_EQ(result.counters[1].rail, "slave0");
  EXPECT_EQ(result.counters[1].transmit_bytes, 10u);
  EXPECT_EQ(result.counters[2].rail, "slave1");
  EXPECT_EQ(result.counters[2].transmit_bytes, 1000u);
  EXPECT_EQ(result.counters[2].share, 0.0);
  EXPECT_EQ(result.bytes_on_other_rails, 1010u);
}

// Another run of this agent on slave1 (a latency probe, say) overlaps the run on r0: slave1's
// bytes are this agent's own, not traffic the run on r0 should be told of; slave0's still count.
TEST_F(TcpProbeTest, OtherRailsBytesLeaveOutThisAgentsConcurrentRuns) {
  const CountingFilesystem fake_sys;
  const RailCounterReader fake_reader(fake_sys);
  context_.counters = &fake_reader;
  ProbeRail slave0 = LoopbackRail("slave0");
  slave0.netdev = "slave0";
  ProbeRail slave1 = LoopbackRail("slave1");
  slave1.netdev = "slave1";
  context_.all_rails = {LoopbackRail("r0"), slave0, slave1};
  ProbeParams params = Params(ProbeKind::kTcpRtt);
  params.duration = 100ms;
  ProbeResult result;
  {
    const OwnRuns::Registration concurrent(OwnRuns::Process(), {"slave1"});
    result = MakeProbe(ProbeKind::kTcpRtt)->Run(params, context_);
  }
  ASSERT_TRUE(result.success) << result.error_message;
  ASSERT_EQ(result.counters.size(), 3u);
  EXPECT_EQ(result.counters[2].rail, "slave1");
  EXPECT_EQ(result.counters[2].transmit_bytes, 1000u) << "its counters are still reported";
  EXPECT_EQ(result.bytes_on_other_rails, 10u) << "only slave0's bytes are not ours";
}

TEST(ProbeFactory, MapsTcpKindsOntoLocalRails) {
  EXPECT_NE(MakeProbe(ProbeKind::kTcpThroughput), nullptr);
  EXPECT_EQ(MakeProbe(ProbeKind::kTcpRtt)->kind(), ProbeKind::kTcpRtt);
  const auto factory = MakeProbeHandlerFactory({LoopbackRail("r0")});
  EXPECT_NE(factory("tcp_throughput", "r0"), nullptr);
  EXPECT_NE(factory("tcp_rtt", "r0"), nullptr);
  EXPECT_EQ(factory("tcp_rtt", "r1"), nullptr);
  EXPECT_EQ(factory("tcp_rtt", "r0,r1"), nullptr) << "rail lists are for multi-rail kinds";
  EXPECT_EQ(factory("no_such_kind", "r0"), nullptr);
}

}  // namespace
}  // namespace rail::probe
