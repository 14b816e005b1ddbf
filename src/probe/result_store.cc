#include "rail/probe/result_store.h"

#include <algorithm>

#include "rail/probe/stats.h"

namespace rail::probe {

std::string RailLabel(const std::vector<std::string>& rails) {
  std::string label;
  for (const auto& rail : rails) label += (label.empty() ? "" : "+") + rail;
  return label;
}

ResultStore::ResultStore(const base::Clock& clock) : clock_(clock), rtt_buckets_(RttBuckets()) {}

void ResultStore::Record(ProbeResult result, std::chrono::milliseconds interval) {
  SeriesKey key{ProbeKindName(result.kind), result.peer,    RailLabel(result.rails),
                result.message_size_bytes,  result.streams, gpu::MemoryTypeName(result.memory)};
  std::lock_guard lock(mutex_);
  auto& state = series_[key];
  state.key = key;
  state.interval = interval;
  ++state.runs;
  if (!result.success) ++state.errors_by_reason[result.error_reason];
  for (const FigureProblem& problem : result.withheld) {
    ++state.withheld_by_invariant[problem.invariant];
  }
  state.remeasure_requested = false;
  if (result.success) {
    state.consecutive_failures = 0;
  } else if (CountsAsFailedRun(result)) {
    ++state.consecutive_failures;
    state.last_failure_reason = result.error_reason;
    state.last_failure_message = result.error_message;
  }
  if (state.rtt_bucket_counts.empty()) state.rtt_bucket_counts.assign(rtt_buckets_.size(), 0);
  for (const double sample : result.rtt_samples_seconds) {
    // Samples above the last bound only count in +Inf, i.e. in rtt_count.
    const auto bucket = std::lower_bound(rtt_buckets_.begin(), rtt_buckets_.end(), sample);
    if (bucket != rtt_buckets_.end()) ++state.rtt_bucket_counts[bucket - rtt_buckets_.begin()];
    ++state.rtt_count;
    state.rtt_sum_seconds += sample;
  }
  // The samples are summarised and counted; the store does not keep them, nor their capacity
  // (clear() would hold on to it for the life of the series).
  result.rtt_samples_seconds = {};
  state.last = std::move(result);
}

std::vector<SeriesState> ResultStore::Snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<SeriesState> states;
  states.reserve(series_.size());
  for (const auto& [key, state] : series_) states.push_back(state);
  return states;
}

void ResultStore::Retain(const std::function<bool(const std::string& kind, const std::string& peer,
                                                  const std::string& rail)>& keep) {
  std::lock_guard lock(mutex_);
  const auto refused = [&keep](const auto& entry) {
    return !keep(entry.first.kind, entry.first.peer, entry.first.rail);
  };
  std::erase_if(series_, refused);
  std::erase_if(busy_, refused);
  std::erase_if(skipped_, refused);
  std::erase_if(remeasures_, refused);
}

bool ResultStore::RequestRemeasure(const SeriesKey& capacity) {
  std::lock_guard lock(mutex_);
  const auto state = series_.find(capacity);
  if (state == series_.end() || state->second.remeasure_requested) return false;
  state->second.remeasure_requested = true;
  ++remeasures_[{capacity.kind, capacity.peer, capacity.rail}];
  return true;
}

std::map<BusyKey, std::uint64_t> ResultStore::RemeasureCounts() const {
  std::lock_guard lock(mutex_);
  return remeasures_;
}

void ResultStore::RecordSkipped(const ProbeResult& result) {
  std::lock_guard lock(mutex_);
  ++skipped_[{ProbeKindName(result.kind), result.peer, RailLabel(result.rails),
              result.error_reason}];
}

std::map<SkippedKey, std::uint64_t> ResultStore::SkippedCounts() const {
  std::lock_guard lock(mutex_);
  return skipped_;
}

std::size_t ResultStore::SeriesCount() const {
  std::lock_guard lock(mutex_);
  return series_.size();
}

void ResultStore::RecordBusy(const ProbeResult& result) {
  BusyKey key{ProbeKindName(result.kind), result.peer, RailLabel(result.rails)};
  std::lock_guard lock(mutex_);
  ++busy_[std::move(key)];
}

std::map<BusyKey, std::uint64_t> ResultStore::BusyCounts() const {
  std::lock_guard lock(mutex_);
  return busy_;
}

bool ResultStore::IsCurrent(const SeriesState& state) const {
  if (state.interval.count() == 0) return true;
  return clock_.WallNow() - state.last.finished_at <= 3 * state.interval;
}

}  // namespace rail::probe
