#include "rail/fleet/discovery.h"

#include <spdlog/spdlog.h>

namespace rail::fleet {
namespace {

// A failure is logged when it is new: the first refresh, after a success, or with another reason.
// A source that keeps failing the same way (a DNS server down for an hour) logs once, and its
// errors counter says how often.
bool FailureIsNews(const SourceStatus& before, const std::string& error) {
  return before.refreshes == 0 || before.healthy || before.last_error != error;
}

void Record(const FetchResult& result, base::WallTime now, SourceStatus* status,
            std::vector<Target>* last_good) {
  const SourceStatus before = *status;
  ++status->refreshes;
  if (result.targets) {
    *last_good = *result.targets;
    status->targets = last_good->size();
    status->healthy = true;
    status->last_success = now;
    if (before.refreshes > 0 && !before.healthy) {
      spdlog::info("fleet discovery: {}: recovered, {} targets", status->name, status->targets);
    }
    return;
  }
  ++status->failures;
  status->healthy = false;
  status->last_error = result.error;
  if (FailureIsNews(before, result.error)) {
    spdlog::warn("fleet discovery: {}: refresh failed, keeping its last {} targets: {}",
                 status->name, last_good->size(), result.error);
  }
}

struct TimedFetch {
  FetchResult result;
  double seconds = 0;
  double cpu_seconds = 0;
};

TimedFetch TimeFetch(Source& source, const base::Clock& clock, const std::atomic<bool>& abandon) {
  const base::TimePoint start = clock.Now();
  const double cpu_start = base::ThreadCpuSeconds();
  TimedFetch fetch{source.Fetch(clock, abandon)};
  fetch.cpu_seconds = base::ThreadCpuSeconds() - cpu_start;
  fetch.seconds = std::chrono::duration<double>(clock.Now() - start).count();
  return fetch;
}

}  // namespace

Discovery::Discovery(std::vector<std::unique_ptr<Source>> sources, const base::Clock& clock)
    : clock_(clock) {
  entries_.reserve(sources.size());
  for (auto& source : sources) {
    Entry entry;
    entry.status.name = source->Name();
    entry.source = std::move(source);
    entries_.push_back(std::move(entry));
  }
}

FetchResult Source::Fetch(const base::Clock& clock) {
  const std::atomic<bool> never{false};
  return Fetch(clock, never);
}

bool Discovery::Refresh() {
  const std::atomic<bool> never{false};
  return Refresh(never);
}

bool Discovery::Refresh(const std::atomic<bool>& abandon) {
  // Which sources are due, decided under the lock; the fetches (which may block for a source's
  // whole timeout) run without it, so that scrapes reading Targets and Status never wait on DNS.
  // Only the fleet thread refreshes, and the entries themselves never change after construction.
  std::vector<Entry*> due;
  {
    std::lock_guard lock(mutex_);
    const base::TimePoint now = clock_.Now();
    for (auto& entry : entries_) {
      if (!entry.next_due || *entry.next_due <= now) due.push_back(&entry);
    }
  }
  std::vector<TimedFetch> results;
  results.reserve(due.size());
  for (Entry* entry : due) results.push_back(TimeFetch(*entry->source, clock_, abandon));
  if (abandon.load()) return false;  // fetches cut short: no failure of the sources'

  std::lock_guard lock(mutex_);
  const base::TimePoint now = clock_.Now();
  for (std::size_t i = 0; i < due.size(); ++i) {
    Entry& entry = *due[i];
    Record(results[i].result, clock_.WallNow(), &entry.status, &entry.last_good);
    entry.status.last_fetch_seconds = results[i].seconds;
    entry.status.last_fetch_cpu_seconds = results[i].cpu_seconds;
    entry.next_due = now + entry.source->RefreshInterval();
  }
  std::vector<Target> merged = MergedLocked();
  if (merged == merged_) return false;
  merged_ = std::move(merged);
  return true;
}

std::vector<Target> Discovery::Targets() const {
  std::lock_guard lock(mutex_);
  return merged_;
}

std::vector<SourceStatus> Discovery::Status() const {
  std::lock_guard lock(mutex_);
  std::vector<SourceStatus> status;
  status.reserve(entries_.size());
  for (const auto& entry : entries_) status.push_back(entry.status);
  return status;
}

std::optional<base::TimePoint> Discovery::NextRefresh() const {
  std::lock_guard lock(mutex_);
  std::optional<base::TimePoint> next;
  for (const auto& entry : entries_) {
    // A source never fetched is due now.
    const base::TimePoint due = entry.next_due.value_or(clock_.Now());
    if (!next || due < *next) next = due;
  }
  return next;
}

std::vector<Target> Discovery::MergedLocked() const {
  std::vector<std::vector<Target>> lists;
  lists.reserve(entries_.size());
  for (const auto& entry : entries_) lists.push_back(entry.last_good);
  return MergeTargets(lists);
}

namespace {

// The configuration's fleet.discovery.static list: never changes, never fails.
class StaticSource final : public Source {
 public:
  explicit StaticSource(std::vector<Target> targets) : targets_(std::move(targets)) {}
  std::string Name() const override { return "static"; }
  // Nothing to re-read; a day keeps it out of the way of the sources that change.
  base::Duration RefreshInterval() const override { return std::chrono::hours(24); }
  FetchResult Fetch(const base::Clock& /*clock*/, const std::atomic<bool>& /*abandon*/) override {
    return FetchResult{targets_, {}};
  }

 private:
  const std::vector<Target> targets_;
};

}  // namespace

std::unique_ptr<Source> MakeStaticSource(std::vector<Target> targets) {
  return std::make_unique<StaticSource>(std::move(targets));
}

}  // namespace rail::fleet
