// Bookkeeping of UCX requests that the probe side and UCX's callbacks share. The states live in
// the side (members), so that their address outlives any request still in UCX's hands.
#pragma once

#include <cstddef>
#include <cstdint>

#include "probe/ucx/handles.h"

namespace rail::probe {

// Sends (throughput operations, pings, echoes): how many were posted, completed and failed.
struct OperationTracker {
  std::uint64_t posted = 0;  // handed to UCX; completed may lag behind
  std::uint64_t completed = 0;
  std::uint64_t failed = 0;
  ucs_status_t first_error = UCS_OK;

  void Complete(ucs_status_t status) noexcept;
  // Parameters of a send whose completion this tracker counts.
  ucp_request_param_t SendParam() noexcept;
  // Counts what a send call returned: completed in place (nullptr; UCX calls no callback then),
  // failed at once (an error pointer; false), or in flight (the callback completes it).
  bool Track(void* request) noexcept;
};

// One tagged receive in flight (or completed and not yet consumed).
struct TagReceiveState {
  void* request = nullptr;  // in flight; nullptr once completed
  bool done = false;
  ucs_status_t status = UCS_OK;
  ucp_tag_recv_info_t info{};
};

namespace detail {

inline constexpr ucp_tag_t kFullTagMask = ~ucp_tag_t{0};

// Posts a receive of `tag` into `buffer`; false when UCX refused it (state->status says why).
bool PostTagReceive(ucp_worker_h worker, TagReceiveState* state, void* buffer, std::size_t bytes,
                    ucp_tag_t tag);
// Cancels a receive still in flight and progresses until its callback ran (at most
// UcxEndpoint::kDefaultCloseLimit), leaving nothing to consume; a receive that already completed
// is left as it is.
void CancelTagReceive(ucp_worker_h worker, TagReceiveState* state);

}  // namespace detail

}  // namespace rail::probe
