#include "rail/schedule/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>

namespace rail::schedule {

namespace {

constexpr Duration kBudgetWindow = std::chrono::hours(1);
// Sums of shares computed in floating point may land a hair above a budget they meet exactly.
constexpr double kBudgetTolerance = 1e-9;

double Seconds(Duration duration) {
  return std::chrono::duration<double>(duration).count();
}

std::string Percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g%%", fraction * 100.0);
  return text;
}

std::string JobLabel(const ProbeJob& job) {
  return "job \"" + job.name + "\"";
}

std::optional<std::string> ValidateBudget(const Budget& budget) {
  if (!(budget.max_bulk_time_fraction_per_rail > 0 &&
        budget.max_bulk_time_fraction_per_rail <= 1)) {
    return "budget: max_bulk_time_fraction_per_rail must be in (0, 1]";
  }
  if (budget.max_bytes_per_hour == 0) return "budget: max_bytes_per_hour must be at least 1";
  return std::nullopt;
}

// Checks one job on its own, before it is added to the budget sums.
std::optional<std::string> ValidateJobShape(const ProbeJob& job, const Budget& budget) {
  const std::string label = JobLabel(job);
  if (job.rails.empty()) return label + ": lists no rails";
  std::set<std::string_view> rails;
  for (const std::string& rail : job.rails) {
    if (rail.empty()) return label + ": has an empty rail name";
    if (!rails.insert(rail).second) return label + ": lists rail \"" + rail + "\" twice";
  }
  if (job.interval <= Duration::zero()) return label + ": interval must be positive";
  if (!(job.jitter_fraction >= 0 && job.jitter_fraction < 1)) {
    return label + ": jitter_fraction must be in [0, 1)";
  }
  if (job.timeout <= Duration::zero()) return label + ": timeout must be positive";
  if (job.start_allowance < Duration::zero()) return label + ": start_allowance is negative";
  if (job.load == ProbeLoad::kBulk && job.expected_bytes == 0) {
    return label + ": expected_bytes must be positive for a bulk probe (the byte budget needs it)";
  }
  if (job.expected_bytes > budget.max_bytes_per_hour) {
    return label + ": one run moves " + std::to_string(job.expected_bytes) +
           " bytes, more than the budget of " + std::to_string(budget.max_bytes_per_hour) +
           " bytes per hour";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ValidateJobs(const std::vector<ProbeJob>& jobs, const Budget& budget) {
  if (auto error = ValidateBudget(budget)) return error;

  std::set<std::string_view> names;
  std::map<std::string_view, double> bulk_share_per_rail;
  double bytes_per_hour = 0;
  for (const ProbeJob& job : jobs) {
    if (job.name.empty()) return std::string("a job has an empty name");
    if (!names.insert(job.name).second) return JobLabel(job) + ": name used twice";
    if (auto error = ValidateJobShape(job, budget)) return error;

    // Worst case: every run lasts its whole timeout and every interval is as short as jitter
    // can make it.
    const double shortest_interval = Seconds(job.interval) * (1.0 - job.jitter_fraction);
    if (job.load == ProbeLoad::kBulk) {
      const double share = Seconds(job.timeout) / shortest_interval;
      for (const std::string& rail : job.rails) {
        double& rail_share = bulk_share_per_rail[rail];
        rail_share += share;
        if (rail_share > budget.max_bulk_time_fraction_per_rail * (1 + kBudgetTolerance)) {
          return JobLabel(job) + " would let bulk probes on rail \"" + rail + "\" take up to " +
                 Percent(rail_share) +
                 " of the time (timeout / shortest jittered interval, summed over the rail's" +
                 " bulk jobs); the budget is " + Percent(budget.max_bulk_time_fraction_per_rail) +
                 ": lengthen the interval or shorten the timeout";
        }
      }
    }
    bytes_per_hour += static_cast<double>(job.expected_bytes) * 3600.0 / shortest_interval;
    if (bytes_per_hour > static_cast<double>(budget.max_bytes_per_hour) * (1 + kBudgetTolerance)) {
      char amount[64];
      std::snprintf(amount, sizeof(amount), "%.0f", std::ceil(bytes_per_hour));
      return JobLabel(job) + " would let all probes together move up to " + amount +
             " bytes per hour; the budget is " + std::to_string(budget.max_bytes_per_hour) +
             ": lengthen intervals or send fewer bytes";
    }
  }
  return std::nullopt;
}

std::unique_ptr<Scheduler> Scheduler::Create(std::vector<ProbeJob> jobs, SchedulerOptions options,
                                             const Clock& clock, std::string* error) {
  if (auto problem = ValidateJobs(jobs, options.budget)) {
    *error = *problem;
    return nullptr;
  }
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(jobs), options, clock));
}

Scheduler::Scheduler(std::vector<ProbeJob> jobs, SchedulerOptions options, const Clock& clock)
    : clock_(clock), options_(options), random_(options.seed) {
  const TimePoint now = clock_.Now();
  jobs_.reserve(jobs.size());
  for (ProbeJob& job : jobs) {
    for (const std::string& rail : job.rails) rails_.try_emplace(rail);
    JobState state;
    state.next_due = now + JitteredInterval(job, 0.0, job.jitter_fraction);
    state.job = std::move(job);
    jobs_.push_back(std::move(state));
  }
}

Duration Scheduler::JitteredInterval(const ProbeJob& job, double low_fraction,
                                     double high_fraction) {
  std::uniform_real_distribution<double> draw(low_fraction, high_fraction);
  const double factor = draw(random_);
  return std::chrono::duration_cast<Duration>(
      std::chrono::duration<double>(Seconds(job.interval) * factor));
}

std::uint64_t Scheduler::WindowBytes(TimePoint now) const {
  std::uint64_t bytes = 0;
  for (const WindowEntry& entry : window_) {
    if (entry.started + kBudgetWindow > now) bytes += entry.bytes;
  }
  return bytes;
}

std::optional<TimePoint> Scheduler::BudgetReleaseTime(TimePoint now, std::uint64_t wanted) const {
  std::uint64_t remaining = WindowBytes(now);
  for (const WindowEntry& entry : window_) {
    if (entry.started + kBudgetWindow <= now) continue;
    remaining -= entry.bytes;
    if (remaining + wanted <= options_.budget.max_bytes_per_hour) {
      return entry.started + kBudgetWindow;
    }
  }
  return std::nullopt;
}

bool Scheduler::Blocked(const ProbeJob& job,
                        const std::map<std::string, RailState, std::less<>>& rails,
                        const std::set<std::string_view>& reserved, int host_bulk,
                        bool host_reserved) const {
  const bool bulk = job.load == ProbeLoad::kBulk;
  if (bulk && options_.bulk_concurrency == base::BulkConcurrency::kPerHost &&
      (host_bulk > 0 || host_reserved)) {
    return true;
  }
  return std::any_of(job.rails.begin(), job.rails.end(), [&](const auto& rail) {
    const RailState& state = rails.find(rail)->second;
    return reserved.contains(rail) || state.bulk_runs > 0 || (bulk && state.latency_runs > 0);
  });
}

Scheduler::Plan Scheduler::MakePlan(TimePoint now) const {
  std::vector<std::size_t> due;
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    if (!jobs_[i].running && DueAt(jobs_[i]) <= now) due.push_back(i);
  }
  std::stable_sort(due.begin(), due.end(), [this](std::size_t a, std::size_t b) {
    return DueAt(jobs_[a]) < DueAt(jobs_[b]);
  });

  Plan plan;
  auto rails = rails_;  // occupancy as it will be once this plan's runs have started
  std::set<std::string_view> reserved;
  int host_bulk = host_bulk_runs_;
  bool host_reserved = false;
  std::uint64_t bytes = WindowBytes(now);
  for (std::size_t index : due) {
    const ProbeJob& job = jobs_[index].job;
    const bool bulk = job.load == ProbeLoad::kBulk;
    if (bytes + job.expected_bytes > options_.budget.max_bytes_per_hour) {
      std::optional<TimePoint> release = BudgetReleaseTime(now, job.expected_bytes);
      if (release && (!plan.budget_release || *release < *plan.budget_release)) {
        plan.budget_release = release;
      }
      continue;
    }
    if (Blocked(job, rails, reserved, host_bulk, host_reserved)) {
      if (bulk) {
        reserved.insert(job.rails.begin(), job.rails.end());
        host_reserved = true;  // only read per host
      }
      continue;
    }
    for (const std::string& rail : job.rails) {
      RailState& state = rails.find(rail)->second;
      ++(bulk ? state.bulk_runs : state.latency_runs);
    }
    if (bulk) ++host_bulk;
    bytes += job.expected_bytes;
    plan.start.push_back(index);
  }
  return plan;
}

void Scheduler::StartJob(std::size_t index, TimePoint now) {
  JobState& state = jobs_[index];
  const ProbeJob& job = state.job;
  state.running = true;
  state.deadline = now + job.start_allowance + job.timeout;
  if (state.retry_at) {
    state.retry_at.reset();  // a retry keeps the regular run where it was
  } else {
    state.next_due =
        now + JitteredInterval(job, 1.0 - job.jitter_fraction, 1.0 + job.jitter_fraction);
  }
  state.run_id = next_run_id_++;
  for (const std::string& rail : job.rails) {
    RailState& rail_state = rails_.find(rail)->second;
    ++(job.load == ProbeLoad::kBulk ? rail_state.bulk_runs : rail_state.latency_runs);
  }
  if (job.load == ProbeLoad::kBulk) ++host_bulk_runs_;
  // Charged at start, so that runs started together cannot overshoot the budget between them.
  window_.push_back({now, job.expected_bytes, state.run_id});
}

void Scheduler::EndRun(JobState& state) {
  state.running = false;
  for (const std::string& rail : state.job.rails) {
    RailState& rail_state = rails_.find(rail)->second;
    --(state.job.load == ProbeLoad::kBulk ? rail_state.bulk_runs : rail_state.latency_runs);
  }
  if (state.job.load == ProbeLoad::kBulk) --host_bulk_runs_;
}

PollResult Scheduler::Poll() {
  const TimePoint now = clock_.Now();
  PollResult result;
  for (JobState& state : jobs_) {
    if (state.running && now >= state.deadline) {
      // A run that timed out keeps its expected bytes in the window: it may well have moved them.
      EndRun(state);
      result.timed_out.push_back(state.job.name);
    }
  }
  while (!window_.empty() && window_.front().started + kBudgetWindow <= now) window_.pop_front();

  for (std::size_t index : MakePlan(now).start) {
    StartJob(index, now);
    result.start.push_back({jobs_[index].job.name, jobs_[index].deadline});
  }
  return result;
}

bool Scheduler::Finished(std::string_view name, std::uint64_t bytes_moved) {
  JobState* state = FindJob(name);
  if (state == nullptr || !state->running) return false;
  EndRun(*state);
  for (WindowEntry& entry : window_) {
    if (entry.run_id == state->run_id) entry.bytes = bytes_moved;
  }
  return true;
}

bool Scheduler::Busy(std::string_view name, std::uint64_t bytes_moved, Duration retry_after) {
  JobState* state = FindJob(name);
  if (state == nullptr || !Finished(name, bytes_moved)) return false;
  const TimePoint retry = clock_.Now() + options_.busy_retry.Wait(retry_after, random_);
  if (retry < state->next_due) state->retry_at = retry;
  return true;
}

bool Scheduler::RunSoon(std::string_view name) {
  JobState* state = FindJob(name);
  if (state == nullptr) return false;
  const TimePoint now = clock_.Now();
  if (now < state->next_due) state->retry_at = now;
  return true;
}

std::optional<TimePoint> Scheduler::NextWakeUp() const {
  const TimePoint now = clock_.Now();
  std::optional<TimePoint> wake;
  const auto consider = [&wake](TimePoint time) {
    if (!wake || time < *wake) wake = time;
  };
  for (const JobState& state : jobs_) {
    if (state.running) {
      if (state.deadline <= now) return now;
      consider(state.deadline);
    } else if (DueAt(state) > now) {
      consider(DueAt(state));
    }
  }
  const Plan plan = MakePlan(now);
  if (!plan.start.empty()) return now;
  if (plan.budget_release) consider(*plan.budget_release);
  return wake;
}

bool Scheduler::IsRunning(std::string_view name) const {
  const JobState* state = FindJob(name);
  return state != nullptr && state->running;
}

std::uint64_t Scheduler::BytesInLastHour() const {
  return WindowBytes(clock_.Now());
}

Scheduler::JobState* Scheduler::FindJob(std::string_view name) {
  for (JobState& state : jobs_) {
    if (state.job.name == name) return &state;
  }
  return nullptr;
}

const Scheduler::JobState* Scheduler::FindJob(std::string_view name) const {
  for (const JobState& state : jobs_) {
    if (state.job.name == name) return &state;
  }
  return nullptr;
}

}  // namespace rail::schedule
