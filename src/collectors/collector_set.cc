#include "rail/collectors/collector_set.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "collectors/families.h"

namespace rail::collectors {
namespace {

constexpr sysfs::ReadFailure kAllFailures[] = {
    sysfs::ReadFailure::kInvalidArgument, sysfs::ReadFailure::kPermissionDenied,
    sysfs::ReadFailure::kIoError, sysfs::ReadFailure::kMissing, sysfs::ReadFailure::kMalformed};

// Keeps the set of logged paths bounded when a broken device keeps producing new paths.
constexpr std::size_t kMaxLoggedPaths = 4096;

}  // namespace

CollectorSet::CollectorSet(Sources sources, const std::vector<std::string>& enabled)
    : sources_(std::move(sources)) {
  SelectReads(enabled, &sources_.inventory);
  for (const auto& info : KnownCollectors()) {
    for (const auto& name : enabled) {
      if (name == info.name) {
        if (auto collector = MakeCollector(name)) collectors_.push_back(std::move(collector));
      }
    }
  }
}

std::vector<std::string> CollectorSet::EnabledNames() const {
  std::vector<std::string> names;
  for (const auto& collector : collectors_) names.push_back(collector->Name());
  return names;
}

std::vector<prometheus::MetricFamily> CollectorSet::Collect() const {
  std::lock_guard lock(mutex_);
  std::vector<prometheus::MetricFamily> families;
  sysfs::ReadErrors errors;
  Scrape scrape(sources_, errors);

  auto duration = detail::Gauge("rail_exporter_scrape_collector_duration_seconds",
                                "Time a collector took in this scrape, including the reads it "
                                "triggered, in seconds.");
  auto success = detail::Gauge("rail_exporter_scrape_collector_success",
                               "1 when the collector succeeded in this scrape, else 0.");
  // The health context's clock, the one the agent injects everywhere.
  const base::Clock& clock =
      sources_.health.clock != nullptr ? *sources_.health.clock : base::SystemClock();
  for (const auto& collector : collectors_) {
    const auto start = clock.Now();
    bool ok = true;
    try {
      collector->Collect(scrape, families);
    } catch (const std::exception& error) {
      ok = false;
      spdlog::error("collector {} failed: {}", collector->Name(), error.what());
    }
    const std::chrono::duration<double> elapsed = clock.Now() - start;
    duration.Add({{"collector", collector->Name()}}, elapsed.count());
    success.Add({{"collector", collector->Name()}}, ok ? 1 : 0);
  }
  duration.MoveTo(families);
  success.MoveTo(families);

  CountAndLog(errors);
  auto read_errors = detail::Counter(
      "rail_exporter_read_errors_total",
      "sysfs/procfs values that could not be read or parsed and were skipped, by reason.");
  for (std::size_t i = 0; i < std::size(kAllFailures); ++i) {
    read_errors.Add({{"reason", sysfs::ReadFailureName(kAllFailures[i])}},
                    static_cast<double>(read_errors_by_reason_[i]));
  }
  read_errors.MoveTo(families);
  return families;
}

void CollectorSet::CountAndLog(const sysfs::ReadErrors& errors) const {
  for (const auto& problem : errors.problems()) {
    for (std::size_t i = 0; i < std::size(kAllFailures); ++i) {
      if (kAllFailures[i] == problem.failure) ++read_errors_by_reason_[i];
    }
    const bool first_time =
        logged_paths_.size() < kMaxLoggedPaths && logged_paths_.insert(problem.path).second;
    const auto level = first_time ? spdlog::level::warn : spdlog::level::debug;
    spdlog::log(level, "skipped {}: {} {}", problem.path, sysfs::ReadFailureName(problem.failure),
                problem.detail);
  }
}

}  // namespace rail::collectors
