// Probe runs skipped because the probe worker could not run them (probe::IsSkipped: it did not
// come back from a restart in time, or its restarts stopped): no runs of their series, so the
// result store never sees them; counted here by kind, peer, rail and reason
// (rail_probe_skipped_total). Owned by the probing service, so the counts outlive the runners a
// reload replaces.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "rail/probe/skipped.h"

namespace rail::probing {

struct SkippedKey {
  std::string kind;
  std::string peer;
  std::string rail;    // as in probe::SeriesKey
  std::string reason;  // probe::kWorkerRestartingReason, probe::kCrashLoopReason
  auto operator<=>(const SkippedKey&) const = default;
};

class SkippedRuns {
 public:
  void Record(const probe::ProbeResult& result);
  std::map<SkippedKey, std::uint64_t> Counts() const;
  // Withdraws the counts whose kind, peer and rail `keep` refuses (probes no longer planned), as
  // probe::ResultStore::Retain does for their series.
  void Retain(const std::function<bool(const std::string& kind, const std::string& peer,
                                       const std::string& rail)>& keep);

 private:
  mutable std::mutex mutex_;
  std::map<SkippedKey, std::uint64_t> counts_;
};

}  // namespace rail::probing
