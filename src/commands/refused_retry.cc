#include "rail/commands/refused_retry.h"

#include <ostream>

#include "rail/probing/plan.h"

namespace rail::commands {
namespace {

bool Refused(const std::vector<probe::ProbeResult>& results, bool* rate) {
  if (results.empty()) return false;
  const probe::ProbeResult& last = results.back();
  *rate = !last.success && last.error_reason == probe::kRateReason;
  return probe::IsBusy(last) || *rate;
}

}  // namespace

std::vector<probe::ProbeResult> RunRetryingRefusals(probe::Probe& probe,
                                                    const probe::ProbeParams& params,
                                                    const probe::ProbeContext& context,
                                                    RefusedRetry& retry, std::ostream& err) {
  for (int attempt = 1;; ++attempt) {
    std::vector<probe::ProbeResult> results = probing::RunProbeSizes(probe, params, context);
    bool rate = false;
    if (!Refused(results, &rate) || attempt >= retry.attempts) return results;
    const base::Duration wait = retry.policy.Wait(results.back().retry_after, retry.random);
    err << "rail_exporter probe: "
        << (rate ? "the peer's rate limit refused the run"
                 : "the peer is busy with another bulk transfer")
        << "; retrying in " << std::chrono::duration_cast<std::chrono::milliseconds>(wait).count()
        << " ms (" << attempt << " of " << retry.attempts - 1 << ")\n";
    retry.sleep(wait);
  }
}

}  // namespace rail::commands
