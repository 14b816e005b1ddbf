// Runs scheduled probes: one thread waits for the scheduler's next wake-up, each started probe
// runs on a thread of its own (latency probes may overlap each other and, on other rails, a bulk
// run), and results go to the store. A run the peer refused busy goes back to the scheduler,
// which retries it.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "rail/agent/probing.h"

namespace rail::agent {

ProbeRunner::ProbeRunner(std::vector<PlannedProbe> plan, schedule::SchedulerOptions options,
                         probe::ProbeContext context, probe::ProbeMaker make_probe,
                         probe::ResultStore& store)
    : plan_(std::move(plan)),
      options_(options),
      context_(std::move(context)),
      make_probe_(std::move(make_probe)),
      store_(store) {
  context_.cancel = &cancel_;
}

ProbeRunner::~ProbeRunner() {
  Stop();
}

bool ProbeRunner::Start(std::string* error) {
  std::vector<schedule::ProbeJob> jobs;
  for (const auto& planned : plan_) jobs.push_back(planned.job);
  schedule::SchedulerOptions options = options_;
  options.seed = std::random_device{}();
  scheduler_ = schedule::Scheduler::Create(std::move(jobs), options, clock_, error);
  if (!scheduler_) return false;
  loop_ = std::thread([this] { Loop(); });
  return true;
}

void ProbeRunner::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !loop_.joinable()) return;
    stopping_ = true;
  }
  cancel_ = true;
  wake_.notify_all();
  if (loop_.joinable()) loop_.join();
  for (auto& [name, running] : running_) {
    if (running.thread.joinable()) running.thread.join();
  }
  running_.clear();
}

const PlannedProbe* ProbeRunner::Find(const std::string& name) const {
  for (const auto& planned : plan_) {
    if (planned.job.name == name) return &planned;
  }
  return nullptr;
}

void ProbeRunner::Launch(const std::string& name) {
  const PlannedProbe* planned = Find(name);
  if (planned == nullptr) return;
  auto& slot = running_[name];
  if (slot.thread.joinable() && !slot.done) {
    // The previous run passed the scheduler's deadline and is still ending: skip this turn
    // rather than wait for it under the lock that its thread needs to finish.
    spdlog::warn("probe {} skipped: its previous run has not ended yet", name);
    scheduler_->Finished(name, 0);
    return;
  }
  if (slot.thread.joinable()) slot.thread.join();
  slot.done = false;
  slot.bytes = 0;
  slot.busy_retry_after.reset();
  slot.thread = std::thread([this, planned, name] {
    auto probe = make_probe_(planned->params.kind);
    std::vector<probe::ProbeResult> results;
    if (probe) {
      results = RunProbeSizes(*probe, planned->params, context_);
    } else {
      probe::ProbeResult unsupported;
      unsupported.kind = planned->params.kind;
      unsupported.error_reason = "unsupported";
      unsupported.error_message = "this agent cannot run this probe kind";
      results.push_back(unsupported);
    }
    std::uint64_t bytes = 0;
    const auto busy = FileResults(*planned, std::move(results), &bytes);
    std::lock_guard lock(mutex_);
    running_[name].done = true;
    running_[name].bytes = bytes;
    running_[name].busy_retry_after = busy;
    wake_.notify_all();
  });
}

std::optional<std::chrono::milliseconds> ProbeRunner::FileResults(
    const PlannedProbe& planned, std::vector<probe::ProbeResult> results, std::uint64_t* bytes) {
  std::optional<std::chrono::milliseconds> busy;
  const std::string& name = planned.job.name;
  for (auto& result : results) {
    if (result.rails.empty()) result.rails = planned.job.rails;
    result.peer = planned.job.peer;  // the configured name, not the address
    if (result.finished_at == std::chrono::system_clock::time_point{}) {
      result.finished_at = std::chrono::system_clock::now();
    }
    if (probe::IsBusy(result)) {
      // The peer is serving another initiator's bulk run: nothing was measured and nothing is
      // wrong with the rail, so it is no run of the series (no failure, no verdict); counted
      // apart and retried after the peer's hint.
      spdlog::debug("probe {} refused busy: {}", name, result.error_message);
      busy = std::max(busy.value_or(result.retry_after), result.retry_after);
      store_.RecordBusy(result);
      continue;
    }
    *bytes += result.bytes;
    if (!result.success && cancel_) {
      // Stopped by the agent (shutting down, or a new fleet plan): says nothing about the rail.
      spdlog::debug("probe {} cancelled: {}", name, result.error_message);
      continue;
    }
    if (!result.success) {
      spdlog::warn("probe {} failed: {}: {}", name, result.error_reason, result.error_message);
    }
    store_.Record(std::move(result), planned.interval);
  }
  return busy;
}

void ProbeRunner::Loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    for (auto& [name, running] : running_) {
      if (!running.done || !running.thread.joinable()) continue;
      running.thread.join();
      if (running.busy_retry_after) {
        scheduler_->Busy(name, running.bytes, *running.busy_retry_after);
      } else {
        scheduler_->Finished(name, running.bytes);
      }
    }
    const auto poll = scheduler_->Poll();
    for (const auto& name : poll.timed_out) {
      // The probe's own timeout ends its thread soon; the scheduler already freed its rails.
      spdlog::warn("probe {} passed its deadline", name);
    }
    for (const auto& order : poll.start) Launch(order.name);
    const auto wake_up = scheduler_->NextWakeUp();
    if (wake_up) {
      wake_.wait_until(lock, *wake_up);
    } else {
      wake_.wait(lock);
    }
  }
}

}  // namespace rail::agent
