// A collector turns what a scrape read into metric families. One collector per file under
// src/collectors; each can be switched off with --no-collector.<name>.
#pragma once

#include <prometheus/metric_family.h>

#include <memory>
#include <string>
#include <vector>

#include "rail/scrape_snapshot.h"

namespace rail {

class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string Name() const = 0;
  // Appends this collector's families. Throwing marks the collector failed for this scrape
  // (rail_exporter_scrape_collector_success 0); the other collectors still run.
  virtual void Collect(ScrapeSnapshot& snapshot, std::vector<prometheus::MetricFamily>& out) = 0;
};

struct CollectorInfo {
  std::string name;
  std::string help;
  bool enabled_by_default;
};

// Every collector the agent knows, in scrape order.
const std::vector<CollectorInfo>& KnownCollectors();

// Creates the named collector; nullptr for an unknown name.
std::unique_ptr<Collector> MakeCollector(const std::string& name);

}  // namespace rail
