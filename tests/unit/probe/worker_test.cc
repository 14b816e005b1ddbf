// The probe worker process (rail/probe/worker.h): its restart rules, its wire encoding, and the
// supervisor against the real worker executable and against stand-ins that crash, hang or never
// start.
#include "rail/probe/worker.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "probe/worker/restart_policy.h"
#include "probe/worker/wire.h"
#include "rail/peer/connection.h"
#include "rail/probe/skipped.h"

namespace rail::probe {
namespace {

constexpr auto kAwaitRestart = ProbeWorker::WhenNoWorker::kAwaitRestart;

using namespace std::chrono_literals;

WorkerPolicy QuickPolicy() {
  WorkerPolicy policy;
  policy.first_backoff = 10ms;
  policy.max_backoff = 80ms;
  policy.crash_loop_deaths = 3;
  policy.start_timeout = 5s;
  return policy;
}

TEST(RestartPolicyTest, DeathAfterUsefulWorkRestartsAtOnceAndNeverLoops) {
  worker::RestartPolicy restarts(QuickPolicy());
  for (int death = 0; death < 10; ++death) EXPECT_EQ(restarts.OnDeath(true), 10ms);
}

TEST(RestartPolicyTest, FruitlessDeathsBackOffThenStop) {
  WorkerPolicy policy = QuickPolicy();
  policy.crash_loop_deaths = 6;
  worker::RestartPolicy restarts(policy);
  EXPECT_EQ(restarts.OnDeath(false), 10ms);
  EXPECT_EQ(restarts.OnDeath(false), 20ms);
  EXPECT_EQ(restarts.OnDeath(false), 40ms);
  EXPECT_EQ(restarts.OnDeath(false), 80ms);
  EXPECT_EQ(restarts.OnDeath(false), 80ms);  // max_backoff
  EXPECT_EQ(restarts.OnDeath(false), std::nullopt);
}

TEST(RestartPolicyTest, UsefulWorkEndsARunOfFruitlessDeaths) {
  worker::RestartPolicy restarts(QuickPolicy());
  EXPECT_EQ(restarts.OnDeath(false), 10ms);
  EXPECT_EQ(restarts.OnDeath(false), 20ms);
  EXPECT_EQ(restarts.OnDeath(true), 10ms);
  EXPECT_EQ(restarts.OnDeath(false), 10ms);
  EXPECT_EQ(restarts.OnDeath(false), 20ms);
  EXPECT_EQ(restarts.OnDeath(false), std::nullopt);
}

TEST(WorkerWireTest, ResultSurvivesTheRoundTrip) {
  ProbeResult result;
  result.kind = ProbeKind::kMultirailCapacity;
  result.peer = "10.0.0.2:9841";
  result.rails = {"rail0", "rail1"};
  result.error_reason = "ucx:Connection reset by remote peer";
  result.finished_at = std::chrono::system_clock::time_point(123456789ns);
  result.retry_after = 2500ms;
  result.bytes = 1ull << 40;
  result.per_rail = {{"rail0", 1.5e9, 3000}};
  result.rtt_samples_seconds = {1e-5, 2e-5};
  result.rtt = LatencySummary{2, 1e-5, 1e-5, 2e-5, 2e-5, 2e-5, 2e-5};
  result.lanes = {{"tcp", "ra0", "rail0"}};
  result.counters = {{"rail1", 10, 20, 0.25}};
  nic::FabricReading reading{"eth1", "mlx5_core", 1491, {}, true};
  reading.samples.push_back({nic::FabricCounter::kPfcPauseMicroseconds, nic::Direction::kRx, 3u,
                             nic::PciOperation::kNone, 400000, "rx_prio3_pause_duration"});
  reading.samples.push_back({nic::FabricCounter::kLinkDownEvents, nic::Direction::kNone,
                             std::nullopt, nic::PciOperation::kNone, 2, "link_down_events_phy"});
  result.fabric = {{"rail0", 2.5, {reading}, {{"hw_counters/out_of_sequence", 7}}}};
  result.peer_cpu_seconds = 0.5;
  result.peer_rail_mtus = {{"rail0", 9000}};
  result.memory = gpu::MemoryType::kCuda;
  result.memory_path = "staged";
  result.gpu_pci_bus_id = "0000:17:00.0";
  result.gpu_link_speed_gts = 16.0;
  std::string error;
  const auto back = worker::ResultFromJson(worker::ToJson(result), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(worker::ToJson(*back), worker::ToJson(result));
  EXPECT_EQ(back->finished_at, result.finished_at);
  EXPECT_EQ(back->retry_after, 2500ms);
  EXPECT_EQ(back->per_rail.at(0).bytes, 3000u);
  EXPECT_EQ(back->rtt->p50, 1e-5);
  EXPECT_EQ(back->memory, gpu::MemoryType::kCuda);
  EXPECT_EQ(back->memory_path, "staged");
  EXPECT_EQ(back->gpu_link_speed_gts, std::optional<double>(16.0));
  ASSERT_EQ(back->fabric.size(), 1u);
  EXPECT_EQ(back->fabric[0].seconds, 2.5);
  EXPECT_EQ(back->fabric[0].counters.at("hw_counters/out_of_sequence"), 7u);
  ASSERT_EQ(back->fabric[0].nic.at(0).samples.size(), 2u);
  const auto& pause = back->fabric[0].nic[0].samples[0];
  EXPECT_EQ(pause.counter, nic::FabricCounter::kPfcPauseMicroseconds);
  EXPECT_EQ(pause.direction, nic::Direction::kRx);
  EXPECT_EQ(pause.priority, std::optional<unsigned>(3));
  EXPECT_EQ(pause.value, 400000u);
  EXPECT_EQ(back->fabric[0].nic[0].samples[1].priority, std::nullopt);
  // A counter kind this build does not know is refused, not cast.
  auto garbled = worker::ToJson(result);
  garbled["fabric"][0]["nic"][0]["samples"][0]["counter"] = 200;
  EXPECT_FALSE(worker::ResultFromJson(garbled, &error));
}

TEST(WorkerWireTest, ParamsSurviveTheRoundTripAndGarbageIsRefused) {
  ProbeParams params;
  params.kind = ProbeKind::kUcxRtt;
  params.operation = UcxOperation::kGet;
  params.rails = {{"rail0", "ra0", "ra0", "10.0.0.1", "", 0, false, std::nullopt}};
  params.timeout = 1234ms;
  params.memory = gpu::MemoryType::kCudaHost;
  std::string error;
  const auto back = worker::ParamsFromJson(worker::ToJson(params), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(worker::ToJson(*back), worker::ToJson(params));
  EXPECT_EQ(back->memory, gpu::MemoryType::kCudaHost);
  nlohmann::json vram = worker::ToJson(params);
  vram["memory"] = "vram";
  EXPECT_FALSE(worker::ParamsFromJson(vram, &error));
  nlohmann::json bad = worker::ToJson(params);
  bad["kind"] = "warp_drive";
  EXPECT_FALSE(worker::ParamsFromJson(bad, &error));
  EXPECT_NE(error.find("warp_drive"), std::string::npos) << error;
}

// A stand-in worker written as a script, in a file of its own.
class ScriptWorker {
 public:
  explicit ScriptWorker(const std::string& body) {
    std::ofstream(path_) << "#!/usr/bin/python3\n" << body;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all);
  }
  ~ScriptWorker() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_ = std::filesystem::temp_directory_path() /
                      ("rail-worker-" + std::to_string(::getpid()) + ".py");
};

// Says hello, then reads requests and never answers.
constexpr char kSilentWorker[] = R"(import json, os, struct, time
hello = json.dumps({"v": 1, "type": "hello", "ucx_version": "stand-in"}).encode()
os.write(3, struct.pack(">I", len(hello)) + hello)
while os.read(3, 65536):
    pass
)";

WorkerOptions Options(const std::string& executable) {
  WorkerOptions options;
  options.executable = executable;
  options.policy = QuickPolicy();
  options.init.agent_version = "test";
  return options;
}

template <typename Predicate>
bool WaitFor(Predicate predicate, std::chrono::milliseconds timeout = 10s) {
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// Binds `socket` to a free loopback port: "127.0.0.1:<port>", or "" when it cannot.
std::string BindLoopback(const base::UniqueFd& socket) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(socket.get(), reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::getsockname(socket.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return "";
  }
  return "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
}

ProbeParams UcxRttParams(const std::string& peer, const std::string& rail,
                         std::chrono::milliseconds timeout) {
  ProbeParams params;
  params.kind = ProbeKind::kUcxRtt;
  params.peer = peer;
  params.rails = {{rail, "lo", "lo", "127.0.0.1", "", 0, false, std::nullopt}};
  params.timeout = timeout;
  return params;
}

TEST(ProbeWorkerTest, RealWorkerSaysHelloWithItsUcxVersion) {
  ProbeWorker worker(Options(RAIL_PROBE_WORKER));
  std::string error;
  ASSERT_TRUE(worker.Start(&error)) << error;
  const WorkerStatus status = worker.Status();
  EXPECT_EQ(status.state, WorkerState::kRunning);
  EXPECT_GT(status.pid, 0);
  EXPECT_EQ(status.ucx_version, QueryWorkerUcxVersion(RAIL_PROBE_WORKER));
  EXPECT_FALSE(status.ucx_version.empty());
  worker.Stop();
  EXPECT_EQ(worker.Status().state, WorkerState::kStopped);
  EXPECT_TRUE(worker.Status().restarts_by_reason.empty());
}

TEST(ProbeWorkerTest, AbortedWorkerFailsTheCallInFlightAndIsRestarted) {
  WorkerOptions options = Options(RAIL_PROBE_WORKER);
  options.policy.first_backoff = 1s;  // long enough for the next run to find it backing off
  ProbeWorker worker(options);
  std::string error;
  ASSERT_TRUE(worker.Start(&error)) << error;
  const int first_pid = worker.Status().pid;
  // A probe to a port that accepts and never answers: the run waits for its handshake.
  base::UniqueFd listener(::socket(AF_INET, SOCK_STREAM, 0));
  const std::string peer = BindLoopback(listener);
  ASSERT_FALSE(peer.empty());
  ASSERT_EQ(::listen(listener.get(), 4), 0);
  const ProbeParams params = UcxRttParams(peer, "rail0", 20s);
  auto run = std::async(std::launch::async,
                        [&] { return WorkerProbeMaker(worker)(params.kind)->Run(params, {}); });
  std::this_thread::sleep_for(300ms);
  ASSERT_EQ(::kill(first_pid, SIGABRT), 0);
  const ProbeResult result = run.get();
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "worker_crashed") << result.error_message;
  EXPECT_NE(result.error_message.find("sigabrt"), std::string::npos) << result.error_message;
  ASSERT_TRUE(WaitFor([&] {
    const WorkerStatus now = worker.Status();
    return now.state == WorkerState::kRunning && now.restarts_by_reason.count("sigabrt") == 1;
  }));
  const WorkerStatus status = worker.Status();
  EXPECT_EQ(status.restarts_by_reason.at("sigabrt"), 1u);
  EXPECT_EQ(status.calls_failed_by_crash, 1u);
}

// The run queued behind a crash (another rail's, say) waits for the restart and runs: its reason
// is the real worker's (nothing listens on the port), not one of the worker's absence.
TEST(ProbeWorkerTest, ARunQueuedBehindACrashWaitsForTheRestartAndRuns) {
  WorkerOptions options = Options(RAIL_PROBE_WORKER);
  options.policy.first_backoff = 1s;
  ProbeWorker worker(options);
  std::string error;
  ASSERT_TRUE(worker.Start(&error)) << error;
  base::UniqueFd closed(::socket(AF_INET, SOCK_STREAM, 0));  // bound, not listening
  const std::string peer = BindLoopback(closed);
  ASSERT_FALSE(peer.empty());
  ASSERT_EQ(::kill(worker.Status().pid, SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return worker.Status().state == WorkerState::kBackingOff; }));
  const ProbeParams params = UcxRttParams(peer, "rail1", 5s);
  const ProbeResult result = WorkerProbeMaker(worker)(params.kind)->Run(params, {});
  EXPECT_FALSE(result.success);
  EXPECT_FALSE(probe::IsSkipped(result)) << result.error_message;
  for (const char* absent : {"worker_unavailable", "worker_crashed", "worker_hung"}) {
    EXPECT_NE(result.error_reason, absent) << result.error_message;
  }
  EXPECT_EQ(worker.Status().state, WorkerState::kRunning);
  EXPECT_EQ(worker.Status().restarts_by_reason.at("sigkill"), 1u);
}

TEST(ProbeWorkerTest, WorkerThatNeverStartsEndsInACrashLoop) {
  ProbeWorker worker(Options("/bin/false"));
  std::string error;
  EXPECT_FALSE(worker.Start(&error));
  ASSERT_TRUE(WaitFor([&] { return worker.Status().state == WorkerState::kCrashLoop; }));
  const WorkerStatus status = worker.Status();
  EXPECT_EQ(status.restarts_by_reason.at("start_failed"), 2u);  // the third death is the loop
  EXPECT_NE(status.detail.find("3 times in a row"), std::string::npos) << status.detail;
  const auto reply = worker.Call({{"type", "run"}}, 1s);
  EXPECT_EQ(reply.reason, "worker_unavailable");
  EXPECT_NE(reply.error.find("crash_loop"), std::string::npos) << reply.error;
  // A probe run does not wait for a worker that will not be restarted: skipped, saying why.
  const auto run = worker.Call({{"type", "run"}}, 1s, nullptr, nullptr, kAwaitRestart);
  EXPECT_EQ(run.reason, kCrashLoopReason);
  EXPECT_NE(run.error.find("restarts stopped"), std::string::npos) << run.error;
}

TEST(ProbeWorkerTest, MissingExecutableIsReportedNotFatal) {
  ProbeWorker worker(Options("/nonexistent/rail_exporter_probe_worker"));
  std::string error;
  EXPECT_FALSE(worker.Start(&error));
  EXPECT_NE(error.find("/nonexistent/rail_exporter_probe_worker"), std::string::npos) << error;
  ASSERT_TRUE(WaitFor([&] { return worker.Status().state == WorkerState::kCrashLoop; }));
  const ProbeResult result = WorkerProbeMaker(worker)(ProbeKind::kUcxRtt)->Run({}, {});
  EXPECT_EQ(result.error_reason, kCrashLoopReason);
  EXPECT_TRUE(probe::IsSkipped(result));
  EXPECT_NE(result.error_message.find("spawn_failed"), std::string::npos) << result.error_message;
}

// Never says hello: a worker that stays `starting` for its whole start_timeout.
constexpr char kSleepyWorker[] = R"(import time
time.sleep(60)
)";

// A worker left `starting`: its Start abandoned at once (no wait for the hello here), it never
// says hello within start_timeout.
class StartingWorker {
 public:
  explicit StartingWorker(
      std::chrono::milliseconds start_timeout,
      std::chrono::milliseconds max_restart_wait = WorkerPolicy{}.max_restart_wait)
      : worker_(SleepyOptions(script_.path(), start_timeout, max_restart_wait)) {
    std::string error;
    const std::atomic<bool> abandon{true};
    EXPECT_FALSE(worker_.Start(&error, &abandon));
  }
  ProbeWorker& worker() { return worker_; }

 private:
  static WorkerOptions SleepyOptions(const std::string& path,
                                     std::chrono::milliseconds start_timeout,
                                     std::chrono::milliseconds max_restart_wait) {
    WorkerOptions options = Options(path);
    options.policy.start_timeout = start_timeout;
    options.policy.max_restart_wait = max_restart_wait;
    return options;
  }
  ScriptWorker script_{kSleepyWorker};
  ProbeWorker worker_;
};

TEST(ProbeWorkerTest, ARunWaitsForARestartingWorkerUpToTheBoundThenIsSkipped) {
  StartingWorker starting(2s, 200ms);
  ProbeWorker& worker = starting.worker();
  const auto reply = worker.Call({{"type", "run"}}, 1s, nullptr, nullptr, kAwaitRestart);
  EXPECT_EQ(reply.reason, kWorkerRestartingReason) << reply.error;
  EXPECT_NE(reply.error.find("within 200 ms"), std::string::npos) << reply.error;
  EXPECT_EQ(worker.Status().state, WorkerState::kStarting);
}

TEST(ProbeWorkerTest, ARunThatMayNotWaitIsSkippedAtOnceWhileTheWorkerRestarts) {
  StartingWorker starting(20s);
  ProbeWorker& worker = starting.worker();
  const auto started = std::chrono::steady_clock::now();
  const auto reply =
      worker.Call({{"type", "run"}}, 1s, nullptr, nullptr, ProbeWorker::WhenNoWorker::kSkip);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);  // a bound, not a timing
  EXPECT_EQ(reply.reason, kWorkerRestartingReason) << reply.error;
  EXPECT_NE(reply.error.find("waits for it no more"), std::string::npos) << reply.error;
  // A call that is no probe run fails at once as before: not skipped, unavailable.
  EXPECT_EQ(worker.Call({{"type", "run"}}, 1s).reason, "worker_unavailable");
}

TEST(ProbeWorkerTest, AStopDoesNotWaitForAWorkerThatHasNotSaidHello) {
  StartingWorker starting(20s);
  ProbeWorker& worker = starting.worker();
  ASSERT_TRUE(WaitFor([&] { return worker.Status().pid > 0; }));
  EXPECT_EQ(worker.Status().state, WorkerState::kStarting);
  const auto started = std::chrono::steady_clock::now();
  worker.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);  // a bound, not a timing
  const WorkerStatus status = worker.Status();
  EXPECT_EQ(status.last_death, "stopped");
  EXPECT_EQ(status.pid, 0);
}

TEST(ProbeWorkerTest, TheWaitForARestartEndsWhenTheRunIsCancelled) {
  StartingWorker starting(3s);  // the bound of the wait, without the cancel
  ProbeWorker& worker = starting.worker();
  std::atomic<bool> cancel{false};
  auto run = std::async(std::launch::async, [&] {
    return worker.Call({{"type", "run"}}, 1s, &cancel, {{"type", "cancel"}}, kAwaitRestart);
  });
  std::this_thread::sleep_for(100ms);
  cancel = true;
  const auto reply = run.get();
  EXPECT_EQ(reply.reason, "cancelled") << reply.error;  // not worker_restarting: cut short
}

TEST(ProbeWorkerTest, SilentWorkerIsKilledAsHungAndRestarted) {
  ScriptWorker script(kSilentWorker);
  ProbeWorker worker(Options(script.path()));
  std::string error;
  ASSERT_TRUE(worker.Start(&error)) << error;
  EXPECT_EQ(worker.Status().ucx_version, "stand-in");
  const auto reply = worker.Call({{"type", "report"}, {"handler", 1}}, 200ms);
  EXPECT_EQ(reply.reason, "worker_hung");
  ASSERT_TRUE(WaitFor([&] { return worker.Status().restarts_by_reason.count("hung") == 1; }));
  ASSERT_TRUE(WaitFor([&] { return worker.Status().state == WorkerState::kRunning; }));
}

TEST(ProbeWorkerTest, FindsTheWorkerBesideTheExecutableUnlessConfigured) {
  EXPECT_EQ(FindWorkerExecutable("/opt/w"), "/opt/w");
  const std::string found = FindWorkerExecutable("");
  EXPECT_EQ(std::filesystem::path(found).filename(), kWorkerExecutableName);
}

}  // namespace
}  // namespace rail::probe
