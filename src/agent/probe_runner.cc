// Runs scheduled probes: one thread waits for the scheduler's next wake-up, each started probe
// runs on a thread of its own (they may overlap on different rails), and results go to the store.
#include <spdlog/spdlog.h>

#include "rail/agent/probing.h"

namespace rail::agent {

ProbeRunner::ProbeRunner(std::vector<PlannedProbe> plan, schedule::Budget budget,
                         probe::ProbeContext context, probe::ProbeMaker make_probe,
                         probe::ResultStore& store)
    : plan_(std::move(plan)),
      budget_(budget),
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
  schedule::SchedulerOptions options;
  options.budget = budget_;
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
  slot.thread = std::thread([this, planned, name] {
    std::uint64_t bytes = 0;
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
    for (auto& result : results) {
      if (result.rails.empty()) result.rails = planned->job.rails;
      result.peer = planned->job.peer;  // the configured name, not the address
      if (result.finished_at == std::chrono::system_clock::time_point{}) {
        result.finished_at = std::chrono::system_clock::now();
      }
      bytes += result.bytes;
      if (!result.success) {
        spdlog::warn("probe {} failed: {}: {}", name, result.error_reason, result.error_message);
      }
      store_.Record(std::move(result), planned->interval);
    }
    std::lock_guard lock(mutex_);
    running_[name].done = true;
    running_[name].bytes = bytes;
    wake_.notify_all();
  });
}

void ProbeRunner::Loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    for (auto& [name, running] : running_) {
      if (!running.done || !running.thread.joinable()) continue;
      running.thread.join();
      scheduler_->Finished(name, running.bytes);
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
