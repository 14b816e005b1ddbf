// When to ask a peer again that refused a run: `busy` (it serves another initiator's bulk run) or
// `rate` (this initiator's per-peer limit is spent). The one rule for the scheduler's retries and
// `rail_exporter probe`'s.
#pragma once

#include <random>

#include "rail/base/clock.h"

namespace rail::schedule {

struct BusyRetryPolicy {
  // The peer's hint, at least `floor`, stretched by U[1, 1 + jitter]: initiators refused together
  // do not all come back together.
  base::Duration floor = std::chrono::seconds(1);
  double jitter = 0.5;

  base::Duration Wait(base::Duration hint, std::mt19937_64& random) const;
};

}  // namespace rail::schedule
