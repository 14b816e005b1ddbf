#include "rail/probing/skipped_runs.h"

#include "rail/probe/result_store.h"

namespace rail::probing {

void SkippedRuns::Record(const probe::ProbeResult& result) {
  std::lock_guard lock(mutex_);
  ++counts_[{probe::ProbeKindName(result.kind), result.peer, probe::RailLabel(result.rails),
             result.error_reason}];
}

std::map<SkippedKey, std::uint64_t> SkippedRuns::Counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

void SkippedRuns::Retain(const std::function<bool(const std::string& kind, const std::string& peer,
                                                  const std::string& rail)>& keep) {
  std::lock_guard lock(mutex_);
  std::erase_if(counts_, [&keep](const auto& entry) {
    return !keep(entry.first.kind, entry.first.peer, entry.first.rail);
  });
}

}  // namespace rail::probing
