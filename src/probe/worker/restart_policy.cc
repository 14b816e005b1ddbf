#include "probe/worker/restart_policy.h"

#include <algorithm>

namespace rail::probe::worker {

std::optional<std::chrono::milliseconds> RestartPolicy::OnDeath(bool answered) {
  if (answered) {
    fruitless_deaths_ = 0;
    return policy_.first_backoff;
  }
  if (++fruitless_deaths_ >= policy_.crash_loop_deaths) return std::nullopt;
  std::chrono::milliseconds wait = policy_.first_backoff;
  for (int death = 1; death < fruitless_deaths_ && wait < policy_.max_backoff; ++death) wait *= 2;
  return std::min(wait, policy_.max_backoff);
}

}  // namespace rail::probe::worker
