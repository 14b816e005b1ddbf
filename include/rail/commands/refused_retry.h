// `rail_exporter probe` against a peer that refuses the run busy (it serves another initiator's
// bulk run) or rate (this initiator's per-peer limit is spent): it asks again after the wait the
// scheduler would take (schedule::BusyRetryPolicy), a bounded number of times.
#pragma once

#include <functional>
#include <iosfwd>
#include <random>
#include <vector>

#include "rail/base/clock.h"
#include "rail/probe/probe.h"
#include "rail/schedule/busy_retry.h"

namespace rail::commands {

struct RefusedRetry {
  schedule::BusyRetryPolicy policy;
  int attempts = 5;  // runs in all, the first included
  std::mt19937_64 random{std::random_device{}()};
  // Waits that long: std::this_thread::sleep_for in the command, a recorder in tests.
  std::function<void(base::Duration)> sleep;
};

// The results of the last run: one per message size (probing::RunProbeSizes), ending with the
// refusal when every attempt was refused. Each retry is announced on `err` with its wait.
std::vector<probe::ProbeResult> RunRetryingRefusals(probe::Probe& probe,
                                                    const probe::ProbeParams& params,
                                                    const probe::ProbeContext& context,
                                                    RefusedRetry& retry, std::ostream& err);

}  // namespace rail::commands
