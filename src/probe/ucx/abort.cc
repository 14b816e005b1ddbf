// What follows an aborted initiator operation: draining what was posted into the peer, then the
// forced close, or the quarantine where UCX 1.13.1 cannot close safely.
#include <algorithm>

#include "probe/ucx/side.h"

namespace rail::probe {

namespace {
std::atomic<int> quarantined_sides{0};
}  // namespace

int UcxProbeSide::QuarantinedSides() {
  return quarantined_sides.load();
}

bool UcxProbeSide::DrainAfterAbort(std::string* why) {
  if (!endpoint_) return true;
  const Clock::time_point limit = Clock::now() + kAbortDrainLimit;
  Clock::time_point last_completion = Clock::now();
  std::uint64_t completed = tracker_.completed;
  while (tracker_.completed < tracker_.posted) {
    if (endpoint_.failed()) {
      *why = std::string("endpoint failed: ") + ucs_status_string(endpoint_.status());
      return false;
    }
    const Clock::time_point now = Clock::now();
    if (now - last_completion >= kAbortDrainIdle || now >= limit) {
      *why = std::to_string(tracker_.posted - tracker_.completed) +
             " operations were still outstanding when the endpoint was closed";
      return false;
    }
    worker_.Progress();
    if (tracker_.completed != completed) {
      completed = tracker_.completed;
      last_completion = Clock::now();
    }
  }
  // Local completion of a put only means the data left this side; the flush completes once the
  // peer has acknowledged every operation.
  std::string message;
  const std::string reason =
      FlushEndpoint(std::min(limit, Clock::now() + kAbortDrainIdle), nullptr, &message);
  if (!reason.empty()) {
    *why =
        "the peer did not acknowledge every operation before the endpoint was closed: " + message;
    return false;
  }
  return true;
}

void UcxProbeSide::Quarantine() {
  quarantined_ = true;
  ++quarantined_sides;
  endpoint_.Leak();
  remote_.Leak();
}

std::string UcxProbeSide::AbortEndpoint() {
  std::string undrained;
  const bool drained = DrainAfterAbort(&undrained);
  // UCX 1.13.1's assertion needs operations outstanding on a multi-lane endpoint; a drained side
  // has none, so only an undrained multi-device side must be quarantined.
  if (!drained && spec_.net_devices.size() > 1) {
    Quarantine();
    return undrained;
  }
  // Forced close first: it completes every request still in UCX's hands (some use the remote
  // key), then the key can go.
  endpoint_.Close(/*force=*/true);
  remote_.reset();
  return undrained;
}

}  // namespace rail::probe
