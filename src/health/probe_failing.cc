// probe_failing: a probe series whose last Thresholds::probe_failing_runs runs failed
// (probe::CountsAsFailedRun: busy refusals, cancelled runs and runs that found no worker do not
// count), on its rail and peer, with the latest error and what UCX last said before a worker died
// (in worker_crashed's message). A failing series keeps failing while it is stale, until a run
// succeeds or the series is withdrawn: a probe that stopped getting through is no pass. A
// series with fewer failures in a row passes only while it is current.
#include <spdlog/fmt/fmt.h>

#include <map>
#include <utility>

#include "health/check_helpers.h"

namespace rail::health::detail {

void CheckProbeFailing(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  const std::uint64_t runs = inputs.thresholds.probe_failing_runs;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> verdicts;  // rail, peer
  for (const auto& state : Series(inputs)) {
    // Every probe runs over rails; a record without any (doctor's hello) is no probe.
    if (state.key.rail.empty()) continue;
    const std::pair<std::string, std::string> key{state.key.rail, state.key.peer};
    if (state.consecutive_failures < runs) {
      if (!inputs.is_current || inputs.is_current(state)) verdicts[key];
      continue;
    }
    verdicts[key].push_back(fmt::format(
        "{} (size {}{}) failed its last {} runs (health.probe_failing_runs {}): {}{}",
        state.key.kind, state.key.message_size_bytes,
        state.key.memory == "host" ? "" : ", " + state.key.memory + " memory",
        state.consecutive_failures, runs, state.last_failure_reason,
        state.last_failure_message.empty() ? "" : " (" + state.last_failure_message + ")"));
  }
  for (const auto& [key, reasons] : verdicts) {
    out.push_back(Verdict("probe_failing", key.first, key.second, Join(reasons, "; ")));
  }
}

}  // namespace rail::health::detail
