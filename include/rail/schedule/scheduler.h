// Decides when each probe runs. It does no I/O and never sleeps: the caller asks what should start
// now (Poll), reports when a run ends (Finished) and sleeps until NextWakeUp, so tests drive it
// with a FakeClock.
//
// Rules:
// * Each job runs every `interval`, each interval drawn uniformly from
//   interval * [1 - jitter, 1 + jitter] by a seedable generator, so that agents started together
//   drift apart while a test with a fixed seed sees the same times every run. The first run is at
//   start + interval * U[0, jitter]. Runs that were missed are not caught up: the next interval
//   counts from the actual start.
// * A job never overlaps itself.
// * A bulk probe needs every one of its rails to itself: at most one bulk transfer per local rail
//   at a time, and no latency probe on a rail while a bulk transfer uses it (the latency would
//   measure the bulk transfer's queueing, not the rail).
// * With bulk_concurrency per host (the default) at most one bulk run on the whole host at a
//   time: two rails measured at once share the host's CPU and PCIe, and each reads slower than
//   it is. A multi-rail run is one run: it holds all its rails, and moves data on them at once.
// * Jobs that are due start in the order they fell due; a bulk job kept waiting by busy rails
//   (or, per host, by another bulk run) reserves them, so a stream of short latency probes or
//   other bulk jobs cannot starve it.
// * A run the peer refused busy (Busy) is retried after the peer's hint, stretched by a random
//   factor so that initiators refused together do not come back together; only within the
//   current interval (a retry never delays or adds to the regular runs), and like any other start
//   it waits for its rails and the budget.
// * RunSoon asks for an extra run of a job now (a capacity measured again because a figure
//   divided by it came out impossible): like a busy retry, it keeps the regular run where it is,
//   waits for its rails and the byte budget, and is dropped when the regular run is due anyway.
// * Budget: per rail, the share of wall time bulk probes may take, and the bytes per hour all
//   probes together may move. Validation refuses a configuration that could exceed either, using
//   each job's timeout as the longest a run can take and its shortest jittered interval. At run
//   time the bytes of the last hour (actual bytes once a run finishes) gate each start as well,
//   so a probe that moved more than it declared cannot push the agent over.
// * Timeouts always end a run: Poll reports a run past its deadline (its timeout and its start
//   allowance after it started) as timed out and releases its rails; a late Finished for it is
//   ignored. Until then its rails stay held, the wait for its start included, so that no other
//   bulk run begins on them while it waits.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "rail/base/bulk_concurrency.h"
#include "rail/base/clock.h"
#include "rail/schedule/busy_retry.h"

namespace rail::schedule {

using base::Clock;
using base::Duration;
using base::TimePoint;

enum class ProbeLoad {
  kBulk,     // a throughput transfer that fills the rail
  kLatency,  // small ping-pongs, disturbed by (and barely disturbing) other traffic
};

struct ProbeJob {
  std::string name;  // unique; names the job in every call and error
  std::string kind;
  std::string peer;
  std::vector<std::string> rails;  // local rails used; a multi-rail probe lists them all
  ProbeLoad load = ProbeLoad::kLatency;
  Duration interval{};
  double jitter_fraction = 0;  // in [0, 1)
  Duration timeout{};          // longest a run may take
  // How long a run may wait, moving nothing, before it starts (for the probe worker to come back
  // from a restart): added to the run's deadline, never to its share of the budget.
  Duration start_allowance{};
  std::uint64_t expected_bytes = 0;  // bytes one run moves (both directions); > 0 for bulk jobs
};

struct Budget {
  double max_bulk_time_fraction_per_rail = 0.05;
  std::uint64_t max_bytes_per_hour = std::uint64_t{1} << 40;  // 1 TiB
};

struct SchedulerOptions {
  Budget budget;
  std::uint64_t seed = 1;  // production passes a random seed; tests a fixed one
  base::BulkConcurrency bulk_concurrency = base::kDefaultBulkConcurrency;
  // When a run the peer refused busy is retried.
  BusyRetryPolicy busy_retry;
};

// nullopt when the jobs are well-formed and fit the budget; otherwise an error that names the
// offending job (and rail).
std::optional<std::string> ValidateJobs(const std::vector<ProbeJob>& jobs, const Budget& budget);

struct StartOrder {
  std::string name;
  TimePoint deadline;  // the run is reported as timed out at this time
};

struct PollResult {
  std::vector<std::string> timed_out;  // runs that passed their deadline; their rails are free
  std::vector<StartOrder> start;       // runs to start now, already marked running
};

class Scheduler {
 public:
  // nullptr and `error` set when ValidateJobs refuses the jobs. `clock` must outlive the
  // scheduler; the jobs' first runs are placed relative to its current time.
  static std::unique_ptr<Scheduler> Create(std::vector<ProbeJob> jobs, SchedulerOptions options,
                                           const Clock& clock, std::string* error);

  PollResult Poll();
  // Ends a run and frees its rails; call Poll afterwards, as waiting jobs may start now. Returns
  // false (and changes nothing) when `name` is not running: unknown, or already timed out.
  bool Finished(std::string_view name, std::uint64_t bytes_moved);
  // Ends a run the peer refused busy, as Finished (`bytes_moved`: what its sizes before the
  // refusal moved), and schedules its retry after `retry_after`, the peer's hint, if that falls
  // before the job's next regular run. Returns false (and changes nothing) when `name` is not
  // running.
  bool Busy(std::string_view name, std::uint64_t bytes_moved, Duration retry_after);
  // Asks for an extra run of `name` as soon as its rails and the budget allow, before its next
  // regular run (which stays where it is). False when `name` is unknown.
  bool RunSoon(std::string_view name);
  // When Poll next has something to do: a job falling due, a deadline, or bytes leaving the
  // budget window. The current time when something can start right away; nullopt when nothing
  // will ever happen (no jobs). Jobs waiting for rails are woken by Finished or a deadline.
  std::optional<TimePoint> NextWakeUp() const;

  bool IsRunning(std::string_view name) const;
  // Bytes counted against the budget over the last hour.
  std::uint64_t BytesInLastHour() const;

 private:
  struct JobState {
    ProbeJob job;
    TimePoint next_due;                 // the next regular run
    std::optional<TimePoint> retry_at;  // a busy run's retry or a RunSoon, before next_due
    bool running = false;
    TimePoint deadline;
    std::uint64_t run_id = 0;
  };
  struct RailState {
    int bulk_runs = 0;
    int latency_runs = 0;
  };
  struct WindowEntry {
    TimePoint started;
    std::uint64_t bytes;
    std::uint64_t run_id;
  };
  struct Plan {
    std::vector<std::size_t> start;           // job indices
    std::optional<TimePoint> budget_release;  // when a job held back by the byte budget may go
  };

  Scheduler(std::vector<ProbeJob> jobs, SchedulerOptions options, const Clock& clock);
  Plan MakePlan(TimePoint now) const;
  std::uint64_t WindowBytes(TimePoint now) const;
  std::optional<TimePoint> BudgetReleaseTime(TimePoint now, std::uint64_t wanted) const;
  Duration JitteredInterval(const ProbeJob& job, double low_fraction, double high_fraction);
  void StartJob(std::size_t index, TimePoint now);
  void EndRun(JobState& state);
  static TimePoint DueAt(const JobState& state) { return state.retry_at.value_or(state.next_due); }
  bool Blocked(const ProbeJob& job, const std::map<std::string, RailState, std::less<>>& rails,
               const std::set<std::string_view>& reserved, int host_bulk, bool host_reserved) const;
  JobState* FindJob(std::string_view name);
  const JobState* FindJob(std::string_view name) const;

  const Clock& clock_;
  SchedulerOptions options_;
  std::vector<JobState> jobs_;
  std::map<std::string, RailState, std::less<>> rails_;
  int host_bulk_runs_ = 0;          // bulk runs under way on the whole host
  std::deque<WindowEntry> window_;  // runs started in the last hour, oldest first
  std::mt19937_64 random_;
  std::uint64_t next_run_id_ = 1;
};

}  // namespace rail::schedule
