#include "rail/peer/bulk_gate.h"

#include <algorithm>

namespace rail::peer {

BulkGate::Pass::Pass(Pass&& other) noexcept : gate_(other.gate_), id_(other.id_) {
  other.gate_ = nullptr;
}

BulkGate::Pass::~Pass() {
  if (gate_ != nullptr) gate_->Release(id_);
}

void BulkGate::Pass::TransferStarted() {
  if (gate_ != nullptr) gate_->StartTransfer(id_);
}

BulkGate::BulkGate(const base::Clock& clock, base::BulkConcurrency concurrency,
                   base::Duration retry_grace)
    : clock_(clock), concurrency_(concurrency), retry_grace_(retry_grace) {}

bool BulkGate::Conflicts(const Holder& holder, const std::string& run,
                         const std::vector<std::string>& rails, bool latency) const {
  if (holder.run == run) return false;          // the same run's other sessions
  if (holder.latency && latency) return false;  // round trips beside round trips
  if (concurrency_ == base::BulkConcurrency::kPerHost) return true;
  return std::any_of(rails.begin(), rails.end(), [&holder](const std::string& rail) {
    return std::find(holder.rails.begin(), holder.rails.end(), rail) != holder.rails.end();
  });
}

std::optional<BulkGate::Pass> BulkGate::TryEnter(const BulkRequest& request,
                                                 base::Duration* retry_after) {
  const base::TimePoint now = clock_.Now();
  const std::lock_guard lock(mutex_);
  std::optional<base::TimePoint> free_at;
  for (const auto& [id, holder] : holders_) {
    if (!Conflicts(holder, request.run, request.rails, request.latency)) continue;
    if (!free_at || holder.expected_end > *free_at) free_at = holder.expected_end;
  }
  if (free_at) {
    ++stats_.busy_total;
    // A holder past its expected end is finishing (its report, a drain): the grace covers it.
    *retry_after = std::max(*free_at - now, base::Duration::zero()) + retry_grace_;
    return std::nullopt;
  }
  const std::uint64_t id = next_id_++;
  holders_[id] = Holder{request.run, request.rails, now + request.expected, request.latency, false};
  return Pass(this, id);
}

void BulkGate::StartTransfer(std::uint64_t id) {
  const std::lock_guard lock(mutex_);
  const auto self = holders_.find(id);
  if (self == holders_.end() || self->second.transferring || self->second.latency) return;
  // Checked against the transfers under way, not against the admissions: a tripwire for any
  // path by which two runs' data could move at once in one scope.
  const bool overlaps = std::any_of(holders_.begin(), holders_.end(), [&](const auto& entry) {
    return entry.first != id && entry.second.transferring && !entry.second.latency &&
           Conflicts(entry.second, self->second.run, self->second.rails, false);
  });
  self->second.transferring = true;
  ++stats_.transfers_total;
  if (overlaps) ++stats_.overlaps_total;
}

void BulkGate::Release(std::uint64_t id) {
  const std::lock_guard lock(mutex_);
  holders_.erase(id);
}

BulkGateStats BulkGate::Stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

std::vector<std::string> SplitRails(const std::string& rail) {
  std::vector<std::string> rails;
  std::size_t start = 0;
  while (start <= rail.size()) {
    const std::size_t comma = std::min(rail.find(',', start), rail.size());
    if (comma > start) rails.push_back(rail.substr(start, comma - start));
    start = comma + 1;
  }
  return rails;
}

}  // namespace rail::peer
