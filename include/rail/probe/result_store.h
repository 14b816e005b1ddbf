// The latest result of every probe series and the cumulative figures collectors publish. Probes
// write, scrapes read: a scrape never waits for a probe, only for this store's mutex, which is
// held for copies only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/probe/result.h"

namespace rail::probe {

// A probe series: one kind against one peer over one set of rails at one message size, with one
// memory type.
struct SeriesKey {
  std::string kind;
  std::string peer;
  std::string rail;  // the rail, or the rails joined with "+" for multi-rail kinds
  std::uint64_t message_size_bytes = 0;
  unsigned streams = 0;  // tcp_throughput: 1 and N streams are two series (iperf3 -P)
  // gpu::MemoryTypeName of the buffers: host and cuda runs of one rail are two series, compared
  // by MemoryThroughputRatios (memory_ratio.h).
  std::string memory = "host";
  auto operator<=>(const SeriesKey&) const = default;
};

struct SeriesState {
  SeriesKey key;
  ProbeResult last;
  std::chrono::milliseconds interval{0};  // the schedule's; 0 for one-off runs
  std::uint64_t runs = 0;
  std::map<std::string, std::uint64_t> errors_by_reason;
  // Failed runs in a row (CountsAsFailedRun) since the series' last success; runs that say
  // nothing about the rail (cancelled, worker_unavailable) neither count nor reset it. The error
  // reason and message of the latest of them, for people (probe_failing's reason).
  std::uint64_t consecutive_failures = 0;
  std::string last_failure_reason;
  std::string last_failure_message;
  // Runs whose figures were withheld, by the invariant they broke (ProbeResult::withheld).
  std::map<std::string, std::uint64_t> withheld_by_invariant;
  // multirail_capacity: an efficiency above range asked for this series to be measured again
  // (RequestRemeasure); cleared by its next run. No efficiency is published meanwhile.
  bool remeasure_requested = false;
  // Cumulative round-trip histogram (bucket upper bounds are RttBuckets()).
  std::vector<std::uint64_t> rtt_bucket_counts;  // per bucket, not cumulative
  std::uint64_t rtt_count = 0;
  double rtt_sum_seconds = 0;
};

std::string RailLabel(const std::vector<std::string>& rails);

// Runs a responder refused busy, by kind, peer and rail(s) (rail_probe_busy_total); also the key
// of the capacity re-measures.
struct BusyKey {
  std::string kind;
  std::string peer;
  std::string rail;  // as in SeriesKey
  auto operator<=>(const BusyKey&) const = default;
};

// Runs skipped because the probe worker could not run them (IsSkipped, skipped.h): by kind, peer,
// rail and reason (rail_probe_skipped_total).
struct SkippedKey {
  std::string kind;
  std::string peer;
  std::string rail;    // as in SeriesKey
  std::string reason;  // kWorkerRestartingReason, kCrashLoopReason
  auto operator<=>(const SkippedKey&) const = default;
};

class ResultStore {
 public:
  // Results are current by the clock's wall time: finished_at stamps are wall-clock times.
  explicit ResultStore(const base::Clock& clock = base::SystemClock());

  // Bins the result's RTT samples into its series' histogram and keeps the result without them
  // (a caller done with the result moves it in: no copy of the samples).
  void Record(ProbeResult result, std::chrono::milliseconds interval);

  std::vector<SeriesState> Snapshot() const;

  // Counts a run the responder refused busy (probe::IsBusy). It is no run of its series: the
  // series' last result, run and error counts stay as they were, so that busy never reads as a
  // failure of the rail.
  void RecordBusy(const ProbeResult& result);
  std::map<BusyKey, std::uint64_t> BusyCounts() const;

  // Marks the series `capacity` to be measured again, once: false (nothing changed) when it is
  // already marked or unknown. Counted per series (RemeasureCounts).
  bool RequestRemeasure(const SeriesKey& capacity);
  // Re-measures requested, by kind, peer and rail(s) (rail_multirail_capacity_remeasures_total).
  std::map<BusyKey, std::uint64_t> RemeasureCounts() const;

  // Counts a run the probe worker could not run (IsSkipped): like busy, no run of its series.
  void RecordSkipped(const ProbeResult& result);
  std::map<SkippedKey, std::uint64_t> SkippedCounts() const;

  // Withdraws every series, busy and skipped count, whose key `keep` refuses: counters included, so
  // that a fleet plan rotating to other peers does not grow the exposition with every epoch.
  void Retain(const std::function<bool(const std::string& kind, const std::string& peer,
                                       const std::string& rail)>& keep);
  std::size_t SeriesCount() const;

  // A result older than three intervals is no longer current: its gauges are withdrawn while
  // its counters stay.
  bool IsCurrent(const SeriesState& state) const;

  const std::vector<double>& rtt_buckets() const { return rtt_buckets_; }

 private:
  const base::Clock& clock_;
  std::vector<double> rtt_buckets_;
  mutable std::mutex mutex_;
  std::map<SeriesKey, SeriesState> series_;
  std::map<BusyKey, std::uint64_t> busy_;
  std::map<SkippedKey, std::uint64_t> skipped_;
  std::map<BusyKey, std::uint64_t> remeasures_;
};

}  // namespace rail::probe
