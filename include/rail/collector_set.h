// The enabled collectors behind one prometheus::Collectable. A scrape reads sysfs once into a
// ScrapeSnapshot, runs every enabled collector in order, times each, and adds the scrape
// metadata (per-collector duration and success, read errors by reason).
#pragma once

#include <prometheus/collectable.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "rail/collector.h"
#include "rail/scrape_snapshot.h"

namespace rail {

class CollectorSet final : public prometheus::Collectable {
 public:
  // `sources` must outlive the set. Unknown names are ignored (validated by the caller).
  CollectorSet(SnapshotSources sources, const std::vector<std::string>& enabled);

  std::vector<prometheus::MetricFamily> Collect() const override;

  // Names of the collectors that run, in scrape order.
  std::vector<std::string> EnabledNames() const;

 private:
  void CountAndLog(const sysfs::ReadErrors& errors) const;

  SnapshotSources sources_;
  std::vector<std::unique_ptr<Collector>> collectors_;

  mutable std::mutex mutex_;  // scrapes are served by several civetweb threads
  mutable std::array<std::uint64_t, 5> read_errors_by_reason_{};
  mutable std::set<std::string> logged_paths_;  // each failing path is logged once at warn
};

}  // namespace rail
