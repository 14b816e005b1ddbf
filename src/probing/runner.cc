// A run the peer refused busy goes back to the scheduler, which retries it; a run the agent
// cancelled (stop, reload, new fleet plan) or that the probe worker skipped is no run of its
// series.
#include "rail/probing/runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "rail/probe/skipped.h"
#include "rail/probe/striping.h"

namespace rail::probing {

ProbeRunner::ProbeRunner(std::vector<PlannedProbe> plan, schedule::SchedulerOptions options,
                         probe::FigureLimits figures, probe::ProbeContext context,
                         probe::ProbeMaker make_probe, probe::ResultStore& store,
                         const base::Clock& clock)
    : plan_(std::move(plan)),
      options_(options),
      figures_(figures),
      context_(std::move(context)),
      make_probe_(std::move(make_probe)),
      store_(store),
      clock_(clock) {
  context_.cancel = &cancel_;
}

ProbeRunner::~ProbeRunner() {
  Stop();
}

bool ProbeRunner::Prepare(std::string* error) {
  std::vector<schedule::ProbeJob> jobs;
  for (const auto& planned : plan_) jobs.push_back(planned.job);
  scheduler_ = schedule::Scheduler::Create(std::move(jobs), options_, clock_, error);
  return scheduler_ != nullptr;
}

bool ProbeRunner::Start(std::string* error) {
  if (!Prepare(error)) return false;
  loop_ = std::thread([this] { Loop(); });
  return true;
}

void ProbeRunner::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cancel_ = true;
  wake_.notify_all();
  if (loop_.joinable()) loop_.join();
  // No pass runs any more: the runs' threads are joined without the lock their ends take.
  for (auto& [name, running] : running_) {
    if (running.thread.joinable()) running.thread.join();
  }
  running_.clear();
}

void ProbeRunner::WaitForRunsToEnd() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] {
    return std::all_of(running_.begin(), running_.end(), [](const auto& entry) {
      return entry.second.done || !entry.second.thread.joinable();
    });
  });
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
  slot = Running{};
  slot.thread = std::thread([this, planned] { Run(*planned); });
}

void ProbeRunner::Run(const PlannedProbe& planned) {
  auto probe = make_probe_(planned.params.kind);
  std::vector<probe::ProbeResult> results;
  if (probe) {
    results = RunProbeSizes(*probe, planned.params, context_);
  } else {
    probe::ProbeResult unsupported;
    unsupported.kind = planned.params.kind;
    unsupported.error_reason = "unsupported";
    unsupported.error_message = "this agent cannot run this probe kind";
    results.push_back(unsupported);
  }
  std::uint64_t bytes = 0;
  const auto busy = FileResults(planned, std::move(results), &bytes);
  std::lock_guard lock(mutex_);
  auto& slot = running_[planned.job.name];
  slot.done = true;
  slot.bytes = bytes;
  slot.busy_retry_after = busy;
  wake_.notify_all();
}

std::optional<std::chrono::milliseconds> ProbeRunner::FileResults(
    const PlannedProbe& planned, std::vector<probe::ProbeResult> results, std::uint64_t* bytes) {
  std::optional<std::chrono::milliseconds> busy;
  const std::string& name = planned.job.name;
  for (auto& result : results) {
    if (result.rails.empty()) result.rails = planned.job.rails;
    result.peer = planned.job.peer;  // the configured name, not the address
    // The store judges currency by the same clock (ResultStore::IsCurrent).
    result.finished_at = clock_.WallNow();
    if (probe::IsBusy(result)) {
      // The peer is serving another initiator's bulk run: nothing was measured and nothing is
      // wrong with the rail, so it is no run of the series (no failure, no verdict); counted
      // apart and retried after the peer's hint.
      spdlog::debug("probe {} refused busy: {}", name, result.error_message);
      busy = std::max(busy.value_or(result.retry_after), result.retry_after);
      store_.RecordBusy(result);
      continue;
    }
    if (probe::IsSkipped(result)) {
      // The probe worker was restarting (another run's crash killed it) and did not come back
      // within the wait, or its restarts stopped: the run never ran.
      spdlog::warn("probe {} skipped: {}: {}", name, result.error_reason, result.error_message);
      store_.RecordSkipped(result);
      continue;
    }
    *bytes += result.bytes;
    if (!result.success && cancel_) {
      // Stopped by the agent (shutting down, a reload, a new fleet plan): says nothing about the
      // rail.
      spdlog::debug("probe {} cancelled: {}", name, result.error_message);
      continue;
    }
    if (!result.success) {
      spdlog::warn("probe {} failed: {}: {}", name, result.error_reason, result.error_message);
    }
    result.withheld = probe::CheckRunFigures(result, planned.params, figures_);
    for (const auto& problem : result.withheld) {
      spdlog::warn("probe {}: figures withheld ({}): {}", name, problem.invariant, problem.message);
    }
    const bool striped = result.success && result.kind == probe::ProbeKind::kUcxMultirailThroughput;
    store_.Record(std::move(result), planned.interval);
    if (striped) RemeasureLowCapacity(planned);
  }
  return busy;
}

void ProbeRunner::RemeasureLowCapacity(const PlannedProbe& planned) {
  const auto is_current = [this](const probe::SeriesState& state) {
    return store_.IsCurrent(state);
  };
  for (const auto& efficiency :
       probe::StripingEfficiencies(store_.Snapshot(), is_current, figures_)) {
    if (efficiency.peer != planned.job.peer ||
        efficiency.withheld_reason != probe::kAboveCapacity ||
        !store_.RequestRemeasure(efficiency.capacity)) {
      continue;
    }
    const auto capacity = std::find_if(plan_.begin(), plan_.end(), [&](const PlannedProbe& job) {
      return job.params.kind == probe::ProbeKind::kMultirailCapacity &&
             job.job.peer == efficiency.peer &&
             probe::RailLabel(job.job.rails) == efficiency.capacity.rail;
    });
    spdlog::warn("striping efficiency of {} withheld: {}{}", efficiency.peer, efficiency.message,
                 capacity == plan_.end() ? " (no capacity probe planned to measure it)" : "");
    if (capacity == plan_.end()) continue;
    std::lock_guard lock(mutex_);
    run_soon_.push_back(capacity->job.name);
    wake_.notify_all();
  }
}

std::optional<base::TimePoint> ProbeRunner::RunDue() {
  std::lock_guard lock(mutex_);
  for (auto& [name, running] : running_) {
    if (!running.done || !running.thread.joinable()) continue;
    running.thread.join();
    if (running.busy_retry_after) {
      scheduler_->Busy(name, running.bytes, *running.busy_retry_after);
    } else {
      scheduler_->Finished(name, running.bytes);
    }
  }
  for (const auto& name : run_soon_) scheduler_->RunSoon(name);
  run_soon_.clear();
  const auto poll = scheduler_->Poll();
  for (const auto& name : poll.timed_out) {
    // The probe's own timeout ends its thread soon; the scheduler already freed its rails.
    spdlog::warn("probe {} passed its deadline", name);
  }
  if (!stopping_) {
    for (const auto& order : poll.start) Launch(order.name);
  }
  return scheduler_->NextWakeUp();
}

void ProbeRunner::Loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const auto wake_up = RunDue();
    lock.lock();
    if (stopping_) break;
    // A wait for a duration of the injected clock: its time points need not be the steady
    // clock's.
    const auto woken = [this] {
      return stopping_ || !run_soon_.empty() ||
             std::any_of(running_.begin(), running_.end(), [](const auto& entry) {
               return entry.second.done && entry.second.thread.joinable();
             });
    };
    if (wake_up) {
      wake_.wait_for(lock, std::max(*wake_up - clock_.Now(), base::Duration::zero()), woken);
    } else {
      wake_.wait(lock, woken);
    }
  }
}

}  // namespace rail::probing
