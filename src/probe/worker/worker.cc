// ProbeWorker's calls (the supervision is supervisor.cc) and finding the executable.
#include "rail/probe/worker.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "probe/worker/spawn.h"
#include "probe/worker/supervisor.h"
#include "rail/base/companion.h"
#include "rail/probe/skipped.h"

namespace rail::probe {
ProbeWorker::ProbeWorker(WorkerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

ProbeWorker::~ProbeWorker() {
  Stop();
}

bool ProbeWorker::Start(std::string* error, const std::atomic<bool>* abandon) {
  impl_->thread = std::thread([impl = impl_.get()] { impl->Supervise(); });
  auto give_up = base::Deadline::After(
      impl_->clock, impl_->options.policy.start_timeout + std::chrono::seconds(1));
  // `abandon` is set by a thread that cannot notify this wait: the deadline looks at it.
  if (abandon != nullptr) give_up = give_up.OrWhenSet(*abandon);
  std::unique_lock lock(impl_->mutex);
  while (impl_->status.state == WorkerState::kStarting && !give_up.Passed()) {
    impl_->changed.wait_for(lock, give_up.BlockFor());
  }
  if (impl_->status.state == WorkerState::kRunning) return true;
  if (give_up.Abandoned()) {
    *error = "abandoned while starting: the agent is stopping";
    return false;
  }
  *error = impl_->status.detail.empty() ? "the probe worker did not start" : impl_->status.detail;
  return false;
}

void ProbeWorker::Stop() {
  std::shared_ptr<worker::Channel> pipe;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
    impl_->kill_reason = "stopped";
    // A worker still starting is not waited for: its wait for hello ends with its pipe.
    pipe = impl_->channel ? impl_->channel : impl_->starting_channel;
    impl_->changed.notify_all();
  }
  // The worker reads the end of its pipe, cancels its probes and exits; Reap kills it after a
  // grace if it does not.
  if (pipe) pipe->Shutdown();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void ProbeWorker::StopBy(const base::Deadline& by) {
  std::lock_guard lock(impl_->mutex);
  impl_->stop_by = by;
  impl_->changed.notify_all();
}

WorkerStatus ProbeWorker::Status() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->status;
}

std::uint64_t ProbeWorker::Generation() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->generation;
}

std::uint64_t ProbeWorker::NewHandlerId() {
  std::lock_guard lock(impl_->mutex);
  return impl_->next_id++;
}

bool ProbeWorker::Send(nlohmann::json message, std::uint64_t generation) {
  std::shared_ptr<worker::Channel> pipe;
  {
    std::lock_guard lock(impl_->mutex);
    if (generation != 0 && generation != impl_->generation) return false;
    pipe = impl_->channel;
  }
  return pipe && pipe->Send(message);
}

ProbeWorker::Reply ProbeWorker::Call(nlohmann::json request, std::chrono::milliseconds timeout,
                                     const std::atomic<bool>* cancel, nlohmann::json on_cancel,
                                     WhenNoWorker when_no_worker) {
  std::unique_lock lock(impl_->mutex);
  if (!impl_->channel && when_no_worker != WhenNoWorker::kFail) {
    const bool may_wait = when_no_worker == WhenNoWorker::kAwaitRestart;
    if (auto ended = impl_->AwaitRestart(lock, may_wait, cancel)) return std::move(*ended);
  }
  if (!impl_->channel) return impl_->Unavailable();
  const std::shared_ptr<worker::Channel> pipe = impl_->channel;
  const std::uint64_t generation = impl_->generation;
  const std::uint64_t id = impl_->next_id++;
  request["id"] = id;
  impl_->pending[id];
  lock.unlock();
  pipe->Send(request);  // a failed send shows as the worker's death, which fails the call
  lock.lock();
  auto deadline = base::Deadline::After(impl_->clock, timeout);
  bool cancel_sent = false;
  while (true) {
    auto call = impl_->pending.find(id);
    if (call->second.done) {
      Reply reply = std::move(call->second.reply);
      impl_->pending.erase(call);
      return reply;
    }
    if (impl_->stop_by && impl_->stop_by->Passed()) {
      impl_->pending.erase(call);  // the worker is ended by Stop, not as hung
      return {false, nullptr, "cancelled",
              "the agent's stop deadline passed before the probe worker answered"};
    }
    if (deadline.Passed()) {
      impl_->pending.erase(call);
      if (generation == impl_->generation) impl_->KillWorker("hung");
      return {false, nullptr, "worker_hung",
              "the probe worker did not answer within " + std::to_string(timeout.count()) +
                  " ms; it was killed"};
    }
    if (cancel != nullptr && *cancel && !cancel_sent && !on_cancel.is_null()) {
      cancel_sent = true;
      on_cancel["id"] = id;
      lock.unlock();
      pipe->Send(on_cancel);
      lock.lock();
      // A cancelled probe ends within its drain; one that does not is hung.
      const auto grace = base::Deadline::After(impl_->clock, impl_->options.policy.call_grace);
      if (grace.at() < deadline.at()) deadline = grace;
      continue;
    }
    // `cancel` is set by a thread that cannot notify this wait: it is looked at every slice.
    impl_->changed.wait_for(
        lock, std::min<base::Duration>(deadline.BlockFor(), base::Deadline::kAbandonSlice));
  }
}

ProbeWorker::Reply ProbeWorker::Impl::Unavailable() const {
  return {false, nullptr, "worker_unavailable",
          std::string("the probe worker is ") + WorkerStateName(status.state) +
              (status.detail.empty() ? "" : ": " + status.detail)};
}

ProbeWorker::Reply ProbeWorker::Impl::NotBack(base::Duration waited, bool may_wait) const {
  const std::string state = std::string("it is ") + WorkerStateName(status.state) +
                            (status.last_death.empty() ? "" : ", last death " + status.last_death);
  if (!may_wait) {
    return {false, nullptr, kWorkerRestartingReason,
            "the probe worker is restarting (" + state +
                ") and this run waits for it no more: it waited once, before an earlier size"};
  }
  const auto waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(waited).count();
  return {false, nullptr, kWorkerRestartingReason,
          "the probe worker did not come back within " +
              std::to_string(std::max<std::int64_t>(waited_ms, 0)) + " ms (" + state + ")"};
}

std::optional<ProbeWorker::Reply> ProbeWorker::Impl::AwaitRestart(
    std::unique_lock<std::mutex>& lock, bool may_wait, const std::atomic<bool>* cancel) {
  // Until the restart under way should have said hello, within max_restart_wait.
  const auto now = clock.Now();
  base::Duration bound =
      may_wait ? base::Duration(options.policy.max_restart_wait) : base::Duration::zero();
  if (status.state == WorkerState::kBackingOff) {
    bound = std::min(bound, restart_at - now + options.policy.start_timeout);
  } else if (status.state == WorkerState::kStarting) {
    bound = std::min(bound, started_at + options.policy.start_timeout - now);
  }
  const base::Deadline give_up(clock, now + bound);
  // `cancel` is set by a thread that cannot notify this wait: it is looked at every slice.
  while (!channel) {
    if (status.state == WorkerState::kCrashLoop) {
      return Reply{false, nullptr, kCrashLoopReason, status.detail};
    }
    if (stopping || status.state == WorkerState::kStopped) return Unavailable();
    if (cancel != nullptr && cancel->load()) {
      return Reply{false, nullptr, "cancelled",
                   "the agent ended the run while it waited for the probe worker"};
    }
    if (give_up.Passed()) return NotBack(bound, may_wait);
    changed.wait_for(lock,
                     std::min<base::Duration>(give_up.BlockFor(), base::Deadline::kAbandonSlice));
  }
  return std::nullopt;
}

std::string FindWorkerExecutable(const std::string& configured) {
  if (!configured.empty()) return configured;
  const auto candidates = base::OwnCompanionPaths(kWorkerExecutableName);
  if (candidates.empty()) return kWorkerExecutableName;
  for (const auto& candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return candidates.front().string();
}

std::string QueryWorkerUcxVersion(const std::string& executable) {
  std::string error;
  std::string version = worker::RunForOutput(executable, {"--ucx-version"}, &error).value_or("");
  while (!version.empty() && (version.back() == '\n' || version.back() == '\r')) version.pop_back();
  return version.empty() ? kUnknownUcxVersion : version;
}

}  // namespace rail::probe
