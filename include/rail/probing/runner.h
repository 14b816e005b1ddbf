// The probe runner: starts each planned probe when the scheduler says so, each run on a thread of
// its own (latency probes may overlap each other and, on other rails, a bulk run), and files the
// results in the store, stamped by the injected clock. A run the probe worker could not run
// (probe::IsSkipped) is no run of its series: counted in `skipped` only. Every run's figures are
// checked as it is filed (probe::CheckRunFigures); a striped run whose efficiency comes out above
// range has its capacity measured again at once (probe/striping.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rail/base/clock.h"
#include "rail/probe/figures.h"
#include "rail/probe/probe.h"
#include "rail/probe/result_store.h"
#include "rail/probing/plan.h"
#include "rail/schedule/scheduler.h"

namespace rail::probing {

class ProbeRunner {
 public:
  // options.seed draws the jitter: the owner's seed, so that a test repeats a schedule.
  ProbeRunner(std::vector<PlannedProbe> plan, schedule::SchedulerOptions options,
              probe::FigureLimits figures, probe::ProbeContext context,
              probe::ProbeMaker make_probe, probe::ResultStore& store, const base::Clock& clock);
  ~ProbeRunner();  // Stop()
  ProbeRunner(const ProbeRunner&) = delete;
  ProbeRunner& operator=(const ProbeRunner&) = delete;

  // Validates the plan against the budget (error names the job) and makes the schedule.
  bool Prepare(std::string* error);
  // Prepare, then the runner thread, which calls RunDue whenever the scheduler wakes it.
  bool Start(std::string* error);
  // Cancels running probes (each notices context.cancel promptly; their own timeouts bound the
  // rest) and joins every thread.
  void Stop();

  // One pass of the runner thread: accounts the runs that ended, starts the due ones, and says
  // when the scheduler next wants a pass. Tests on a fake clock call it instead of Start.
  std::optional<base::TimePoint> RunDue();
  // Waits until no started run is still running (their results are filed then).
  void WaitForRunsToEnd();

 private:
  struct Running {
    std::thread thread;
    bool done = false;
    std::uint64_t bytes = 0;
    // The peer refused the run busy: retry after this (its hint) instead of counting a run.
    std::optional<std::chrono::milliseconds> busy_retry_after;
  };
  void Loop();
  void Launch(const std::string& name);  // under mutex_
  void Run(const PlannedProbe& planned);
  // Files a run's results; its bytes, or the retry hint when the peer refused it busy.
  std::optional<std::chrono::milliseconds> FileResults(const PlannedProbe& planned,
                                                       std::vector<probe::ProbeResult> results,
                                                       std::uint64_t* bytes);
  const PlannedProbe* Find(const std::string& name) const;
  // After a striped run of `planned`'s peer: when its efficiency is above range, asks for its
  // capacity to be measured again (the store withholds the efficiency until then) and queues the
  // capacity job for an early run.
  void RemeasureLowCapacity(const PlannedProbe& planned);

  const std::vector<PlannedProbe> plan_;
  const schedule::SchedulerOptions options_;
  const probe::FigureLimits figures_;
  probe::ProbeContext context_;
  const probe::ProbeMaker make_probe_;
  probe::ResultStore& store_;
  const base::Clock& clock_;
  std::unique_ptr<schedule::Scheduler> scheduler_;
  std::atomic<bool> cancel_{false};

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, Running> running_;
  std::vector<std::string> run_soon_;  // jobs to start early at the next pass (RunSoon)
  std::thread loop_;
};

}  // namespace rail::probing
