// When the supervisor restarts a dead worker (WorkerPolicy says why so): right away after a
// worker that did useful work, with exponential back-off after one that did not, never again
// after crash_loop_deaths of those in a row. Pure, so that the rules are tested without waiting.
#pragma once

#include <chrono>
#include <optional>

#include "rail/probe/worker.h"

namespace rail::probe::worker {

class RestartPolicy {
 public:
  explicit RestartPolicy(const WorkerPolicy& policy) : policy_(policy) {}

  // A worker died; `answered` when it had answered a call. How long to wait before the next
  // start, or nullopt for a crash loop (no more restarts).
  std::optional<std::chrono::milliseconds> OnDeath(bool answered);

 private:
  WorkerPolicy policy_;
  int fruitless_deaths_ = 0;  // in a row
};

}  // namespace rail::probe::worker
