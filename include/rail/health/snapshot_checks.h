// The health checks over what one scrape read: the health collector and the landing page both
// evaluate them this way, so the page never disagrees with rail_check_ok.
#pragma once

#include <vector>

#include "rail/health/checks.h"
#include "rail/scrape_snapshot.h"

namespace rail::health {

// What the checks saw and said, so that a caller showing them reads nothing twice.
struct SnapshotVerdicts {
  std::vector<InterfaceAddress> addresses;
  std::vector<probe::SeriesState> series;  // every probe series, current or not
  std::vector<CheckResult> checks;
};

// Evaluates every check on the snapshot's devices, rails, netdevs and bonds, the sources'
// interface addresses and probe results (only current results count). Does not log.
SnapshotVerdicts EvaluateSnapshot(ScrapeSnapshot& snapshot);

}  // namespace rail::health
