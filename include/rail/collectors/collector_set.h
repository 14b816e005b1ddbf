// The enabled collectors behind one prometheus::Collectable. A scrape reads sysfs once into a
// Scrape (collector.h), runs every enabled collector in order, times each, and adds the scrape
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

#include "rail/collectors/collector.h"

namespace rail::collectors {

class CollectorSet final : public prometheus::Collectable {
 public:
  // Unknown names are ignored (validated by the caller). What sysfs reads is set from what the
  // enabled collectors need (SelectReads).
  CollectorSet(Sources sources, const std::vector<std::string>& enabled);

  std::vector<prometheus::MetricFamily> Collect() const override;

  // What scrapes read from, reads selected: a landing page reads as a scrape does.
  const Sources& sources() const { return sources_; }

  // Names of the collectors that run, in scrape order.
  std::vector<std::string> EnabledNames() const;

 private:
  void CountAndLog(const sysfs::ReadErrors& errors) const;

  Sources sources_;
  std::vector<std::unique_ptr<Collector>> collectors_;

  mutable std::mutex mutex_;  // scrapes are served by the web endpoint's handler threads
  mutable std::array<std::uint64_t, 5> read_errors_by_reason_{};
  mutable std::set<std::string> logged_paths_;  // each failing path is logged once at warn
};

}  // namespace rail::collectors
