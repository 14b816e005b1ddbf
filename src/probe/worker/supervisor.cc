// The supervision thread: one worker at a time, restarted with back-off until a crash loop.
#include "probe/worker/supervisor.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include "probe/worker/spawn.h"
#include "probe/worker/wire.h"
#include "rail/base/wait.h"
#include "rail/peer/encoding.h"

namespace rail::probe {
namespace {

// A worker whose pipe ended gets this long to exit before it is killed.
constexpr std::chrono::milliseconds kExitGrace{3000};

std::string Seconds(std::chrono::milliseconds duration) {
  return std::to_string(std::chrono::duration<double>(duration).count()).substr(0, 5) + " s";
}

}  // namespace

const char* WorkerStateName(WorkerState state) {
  switch (state) {
    case WorkerState::kStarting:
      return "starting";
    case WorkerState::kRunning:
      return "running";
    case WorkerState::kBackingOff:
      return "backing_off";
    case WorkerState::kCrashLoop:
      return "crash_loop";
    case WorkerState::kStopped:
      return "stopped";
  }
  return "unknown";
}

nlohmann::json ProbeWorker::Impl::InitMessage() const {
  const WorkerInit& init = options.init;
  nlohmann::json message = {{"type", "init"},
                            {"insecure", init.secret == nullptr},
                            {"agent_version", init.agent_version},
                            {"sysfs_root", init.sysfs_root},
                            {"rails", worker::ToJson(init.rails)},
                            {"remembered_nonces", init.remembered_nonces},
                            {"log_level", init.log_level},
                            {"log_format", init.log_format},
                            {"cuda_library", init.cuda_library}};
  if (init.secret) message["secret_hex"] = peer::HexEncode(init.secret->bytes());
  return message;
}

bool ProbeWorker::Impl::AwaitHello(worker::Channel& pipe) {
  std::string error;
  const auto start = base::Deadline::After(clock, options.policy.start_timeout);
  const auto hello = pipe.Receive(&error, &start);
  if (!hello || hello->value("type", "") != "hello") {
    std::lock_guard lock(mutex);
    if (!stopping) {  // else Stop ended the wait
      status.detail = "the probe worker " + options.executable +
                      " did not say hello: " + (hello ? "unexpected " + hello->dump() : error);
    }
    return false;
  }
  std::lock_guard lock(mutex);
  status.ucx_version = hello->value("ucx_version", "");
  status.capabilities =
      CapabilitiesFromJson(hello->value("capabilities", nlohmann::json::object()));
  return true;
}

void ProbeWorker::Impl::ReadReplies(worker::Channel& pipe) {
  while (true) {
    std::string error;
    auto message = pipe.Receive(&error);
    if (!message) {
      spdlog::debug("probe worker pipe ended: {}", error);
      return;
    }
    if (message->value("type", "") != "reply" || !message->contains("id")) continue;
    Reply reply;
    reply.ok = message->value("ok", false);
    reply.reason = message->value("reason", "");
    reply.error = message->value("message", "");
    const auto id = message->at("id").get<std::uint64_t>();
    reply.message = std::move(*message);
    std::lock_guard lock(mutex);
    answered = true;
    const auto call = pending.find(id);
    if (call == pending.end()) continue;  // its caller gave up (hung) or went away
    call->second.reply = std::move(reply);
    call->second.done = true;
    changed.notify_all();
  }
}

void ProbeWorker::Impl::FailPending(const std::string& reason, const std::string& message) {
  for (auto& [id, call] : pending) {
    if (call.done) continue;
    call.done = true;
    call.reply = Reply{false, nullptr, reason, message};
    ++status.calls_failed_by_crash;
  }
  changed.notify_all();
}

void ProbeWorker::Impl::Reap(pid_t worker_pid, const std::string& fallback_reason,
                             worker::StderrRelay& relay) {
  int wait_status = 0;
  const auto give_up = base::Deadline::After(clock, kExitGrace);
  const std::optional<base::Deadline> stop = [this] {
    std::lock_guard lock(mutex);
    return stop_by;
  }();
  const auto over = [&] { return give_up.Passed() || (stop && stop->Passed()); };
  pid_t reaped = 0;
  while ((reaped = ::waitpid(worker_pid, &wait_status, WNOHANG)) == 0 && !over()) {
    std::this_thread::sleep_for(
        std::min<base::Duration>(give_up.BlockFor(), std::chrono::milliseconds(20)));
  }
  if (reaped == 0) {
    ::kill(worker_pid, SIGKILL);
    reaped = ::waitpid(worker_pid, &wait_status, 0);
  }
  const std::string fatal_line = relay.Finish();
  std::lock_guard lock(mutex);
  std::string reason = !kill_reason.empty() ? kill_reason
                       : reaped > 0         ? worker::DeathReason(wait_status)
                                            : fallback_reason;
  status.last_death = reason;
  status.pid = 0;
  status.state = WorkerState::kBackingOff;  // Supervise decides whether it is a crash loop
  pid = -1;
  FailPending("worker_crashed",
              "the probe worker died during the call (" + reason + ")" +
                  (fatal_line.empty() ? "" : "; its last fatal line: " + fatal_line));
}

bool ProbeWorker::Impl::RunOnce() {
  std::string error;
  worker::Spawned spawned =
      worker::SpawnWorker(options.executable, {}, options.environment, &error);
  if (spawned.pid < 0) {
    std::lock_guard lock(mutex);
    status.last_death = "spawn_failed";
    status.detail = "cannot start the probe worker: " + error;
    spdlog::error("{}", status.detail);
    return false;
  }
  worker::StderrRelay relay(std::move(spawned.stderr_read));
  auto pipe = std::make_shared<worker::Channel>(std::move(spawned.channel));
  {
    std::lock_guard lock(mutex);
    pid = spawned.pid;
    status.pid = pid;
    status.state = WorkerState::kStarting;
    started_at = clock.Now();
    kill_reason = stopping ? "stopped" : "";
    answered = false;
    starting_channel = pipe;
    // Stop came first and could not see this pipe: the wait for hello ends at once.
    if (stopping) pipe->Shutdown();
  }
  const bool up = pipe->Send(InitMessage()) && AwaitHello(*pipe);
  if (!up) {
    // A worker that never said hello has nothing to end cleanly: no grace (Reap's) for it.
    ::kill(spawned.pid, SIGKILL);
    std::lock_guard lock(mutex);
    starting_channel.reset();
    if (kill_reason.empty()) kill_reason = "start_failed";  // however it ended before hello
  }
  if (up) {
    {
      std::lock_guard lock(mutex);
      channel = pipe;  // in the same section as the reset: Stop always sees one of the two
      starting_channel.reset();
      ++generation;
      status.state = WorkerState::kRunning;
      status.detail.clear();
      changed.notify_all();
    }
    spdlog::info("probe worker running (pid {}, UCX {})", spawned.pid, status.ucx_version);
    ReadReplies(*pipe);
    std::lock_guard lock(mutex);
    channel.reset();
  }
  Reap(spawned.pid, "start_failed", relay);
  return up;
}

bool ProbeWorker::Impl::WaitBeforeRestart(const base::Deadline& restart) {
  std::unique_lock lock(mutex);
  return !base::WaitUntil(changed, lock, restart, [this] { return stopping; });
}

void ProbeWorker::Impl::Supervise() {
  while (true) {
    RunOnce();
    std::optional<std::chrono::milliseconds> wait;
    std::optional<base::Deadline> restart;
    {
      std::lock_guard lock(mutex);
      if (stopping) break;
      wait = restarts.OnDeath(answered);
      if (!wait) {
        status.state = WorkerState::kCrashLoop;
        status.detail = "restarts stopped: the probe worker died " +
                        std::to_string(options.policy.crash_loop_deaths) +
                        " times in a row before answering anything (last: " + status.last_death +
                        (status.detail.empty() ? "" : ", " + status.detail) +
                        "); probes over UCX are skipped until the agent restarts; inventory is "
                        "still served";
        spdlog::error("{}", status.detail);
        changed.notify_all();
        return;
      }
      ++status.restarts_by_reason[status.last_death];
      status.state = WorkerState::kBackingOff;
      restart = base::Deadline::After(clock, *wait);
      restart_at = restart->at();
      changed.notify_all();
      spdlog::warn("probe worker ended ({}); restarting in {}", status.last_death, Seconds(*wait));
    }
    if (!WaitBeforeRestart(*restart)) break;
  }
  std::lock_guard lock(mutex);
  status.state = WorkerState::kStopped;
  changed.notify_all();
}

void ProbeWorker::Impl::KillWorker(const std::string& reason) {
  if (pid <= 0) return;
  kill_reason = reason;
  ::kill(pid, SIGKILL);
}

}  // namespace rail::probe
