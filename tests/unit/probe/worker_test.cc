// The probe worker process (rail/probe/worker.h): its restart rules and the supervisor against
// the real worker executable and against stand-ins that crash, hang or never start. The waits
// whose length is the point (a call's timeout, the wait for a restart, a back-off) run on a fake
// clock the test moves: hours of it, in milliseconds of real time.
#include "rail/probe/worker.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
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
#include "support/fake_clock.h"

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

// The reply of `call`, moving `clock` by `step` every millisecond of real time until it comes (a
// bound of 10 s real time: a call that would read the real clock fails here, never hangs).
ProbeWorker::Reply MoveClockUntil(std::future<ProbeWorker::Reply>& call, test::FakeClock& clock,
                                  base::Duration step) {
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (call.wait_for(1ms) != std::future_status::ready) {
    if (std::chrono::steady_clock::now() > give_up) {
      ADD_FAILURE() << "the call did not end as the fake clock moved";
      break;
    }
    clock.Advance(step);
  }
  return call.get();
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
  test::FakeClock clock;
  WorkerOptions options = Options(RAIL_PROBE_WORKER);
  options.policy.first_backoff = 1h;  // of the fake clock: the restart waits for the test
  options.policy.start_timeout = 1000h;
  options.clock = &clock;
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
  // The worker's connection waiting in the accept queue: the run is in flight.
  pollfd connected{listener.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&connected, 1, 10'000), 1) << "the probe never connected";
  ASSERT_EQ(::kill(first_pid, SIGABRT), 0);
  const ProbeResult result = run.get();
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "worker_crashed") << result.error_message;
  EXPECT_NE(result.error_message.find("sigabrt"), std::string::npos) << result.error_message;
  ASSERT_TRUE(WaitFor([&] {
    clock.Advance(10min);  // from the death on: the back-off's deadline is set after it
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
// says hello. Its supervision runs on a fake clock that moves only when a test moves it.
class StartingWorker {
 public:
  explicit StartingWorker(
      std::chrono::milliseconds start_timeout,
      std::chrono::milliseconds max_restart_wait = WorkerPolicy{}.max_restart_wait)
      : worker_(SleepyOptions(script_.path(), start_timeout, max_restart_wait, clock_)) {
    std::string error;
    const std::atomic<bool> abandon{true};
    EXPECT_FALSE(worker_.Start(&error, &abandon));
  }
  ProbeWorker& worker() { return worker_; }
  test::FakeClock& clock() { return clock_; }

 private:
  static WorkerOptions SleepyOptions(const std::string& path,
                                     std::chrono::milliseconds start_timeout,
                                     std::chrono::milliseconds max_restart_wait,
                                     const base::Clock& clock) {
    WorkerOptions options = Options(path);
    options.policy.start_timeout = start_timeout;
    options.policy.max_restart_wait = max_restart_wait;
    options.clock = &clock;
    return options;
  }
  ScriptWorker script_{kSleepyWorker};
  test::FakeClock clock_;
  ProbeWorker worker_;
};

// The bound is an hour of the injected clock: the run is skipped once the test has moved it that
// far, not after an hour of real time.
TEST(ProbeWorkerTest, ARunWaitsForARestartingWorkerUpToTheBoundThenIsSkipped) {
  StartingWorker starting(2h, 1h);
  ProbeWorker& worker = starting.worker();
  auto call = std::async(std::launch::async, [&] {
    return worker.Call({{"type", "run"}}, 1s, nullptr, nullptr, kAwaitRestart);
  });
  const auto reply = MoveClockUntil(call, starting.clock(), 10min);
  EXPECT_EQ(reply.reason, kWorkerRestartingReason) << reply.error;
  EXPECT_NE(reply.error.find("within 3600000 ms"), std::string::npos) << reply.error;
  EXPECT_EQ(worker.Status().state, WorkerState::kStarting);  // 2 h of start_timeout not over
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

// The fake clock never moves: only the cancel can end the wait.
TEST(ProbeWorkerTest, TheWaitForARestartEndsWhenTheRunIsCancelled) {
  StartingWorker starting(3s);
  ProbeWorker& worker = starting.worker();
  std::atomic<bool> cancel{false};
  auto run = std::async(std::launch::async, [&] {
    return worker.Call({{"type", "run"}}, 1s, &cancel, {{"type", "cancel"}}, kAwaitRestart);
  });
  cancel = true;
  const auto reply = run.get();
  EXPECT_EQ(reply.reason, "cancelled") << reply.error;  // not worker_restarting: cut short
}

// An hour's call timeout on the fake clock: killed as hung once the test moves it an hour.
TEST(ProbeWorkerTest, SilentWorkerIsKilledAsHungAndRestarted) {
  ScriptWorker script(kSilentWorker);
  test::FakeClock clock;
  WorkerOptions options = Options(script.path());
  options.policy.start_timeout = 1000h;  // the restarted stand-in's hello, while the clock moves
  options.clock = &clock;
  ProbeWorker worker(options);
  std::string error;
  ASSERT_TRUE(worker.Start(&error)) << error;
  EXPECT_EQ(worker.Status().ucx_version, "stand-in");
  auto call = std::async(std::launch::async, [&] {
    return worker.Call({{"type", "report"}, {"handler", 1}}, 1h);
  });
  EXPECT_EQ(MoveClockUntil(call, clock, 10min).reason, "worker_hung");
  // The restart waits for first_backoff (10 ms) of the fake clock.
  ASSERT_TRUE(WaitFor([&] {
    clock.Advance(1s);
    const WorkerStatus now = worker.Status();
    return now.restarts_by_reason.count("hung") == 1 && now.state == WorkerState::kRunning;
  }));
}

// The agent's stop deadline ends a call still waiting for its reply (a cancelled probe's drain
// may take call_grace): cancelled, not hung, and no restart for it.
TEST(ProbeWorkerTest, TheStopDeadlineEndsACallStillWaiting) {
  ScriptWorker script(kSilentWorker);
  test::FakeClock clock;
  WorkerOptions options = Options(script.path());
  options.clock = &clock;
  ProbeWorker worker(options);
  std::string error;
  ASSERT_TRUE(worker.Start(&error)) << error;
  auto call = std::async(std::launch::async, [&] {
    return worker.Call({{"type", "report"}, {"handler", 1}}, 1h);
  });
  worker.StopBy(base::Deadline::After(clock, 1min));
  const auto reply = MoveClockUntil(call, clock, 10s);
  EXPECT_EQ(reply.reason, "cancelled") << reply.error;
  EXPECT_TRUE(worker.Status().restarts_by_reason.empty());
}

TEST(ProbeWorkerTest, FindsTheWorkerBesideTheExecutableUnlessConfigured) {
  EXPECT_EQ(FindWorkerExecutable("/opt/w"), "/opt/w");
  const std::string found = FindWorkerExecutable("");
  EXPECT_EQ(std::filesystem::path(found).filename(), kWorkerExecutableName);
}

}  // namespace
}  // namespace rail::probe
