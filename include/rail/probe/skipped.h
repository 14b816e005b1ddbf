// Runs skipped because the probe worker could not run them: it did not come back from a restart
// within WorkerPolicy::max_restart_wait, or its restarts stopped (crash loop). Nothing was
// measured and nothing is known of the rail: no run of its series, counted apart
// (rail_probe_skipped_total).
#pragma once

#include "rail/probe/result.h"

namespace rail::probe {

inline constexpr const char* kWorkerRestartingReason = "worker_restarting";
inline constexpr const char* kCrashLoopReason = "crash_loop";

inline bool IsSkipped(const ProbeResult& result) {
  return !result.success && (result.error_reason == kWorkerRestartingReason ||
                             result.error_reason == kCrashLoopReason);
}

}  // namespace rail::probe
