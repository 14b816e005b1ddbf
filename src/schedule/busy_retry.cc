#include "rail/schedule/busy_retry.h"

#include <algorithm>

namespace rail::schedule {

base::Duration BusyRetryPolicy::Wait(base::Duration hint, std::mt19937_64& random) const {
  std::uniform_real_distribution<double> stretch(1.0, 1.0 + jitter);
  const std::chrono::duration<double> seconds = std::max(hint, floor);
  return std::chrono::duration_cast<base::Duration>(seconds * stretch(random));
}

}  // namespace rail::schedule
