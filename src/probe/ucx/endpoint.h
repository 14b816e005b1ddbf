// The endpoint of a probe side to its peer's worker, and how it closes.
#pragma once

#include <chrono>
#include <string>

#include "probe/ucx/handles.h"

namespace rail::probe {

// An endpoint. Closing needs the worker to make progress until UCX has flushed (or, forced,
// cancelled) what is outstanding; both are bounded in time so that a dead peer cannot hang the
// caller. The destructor closes politely (flush) unless MarkFailed() was called, in which case it
// forces: after an endpoint error UCX only accepts a forced close.
class UcxEndpoint {
 public:
  UcxEndpoint() = default;
  UcxEndpoint(ucp_worker_h worker, ucp_ep_h endpoint) noexcept
      : worker_(worker), endpoint_(endpoint) {}
  ~UcxEndpoint() { Close(failed_, kDefaultCloseLimit); }
  UcxEndpoint(const UcxEndpoint&) = delete;
  UcxEndpoint& operator=(const UcxEndpoint&) = delete;
  UcxEndpoint(UcxEndpoint&& other) noexcept;
  UcxEndpoint& operator=(UcxEndpoint&& other) noexcept;

  ucp_ep_h get() const noexcept { return endpoint_; }
  explicit operator bool() const noexcept { return endpoint_ != nullptr; }
  void MarkFailed() noexcept { failed_ = true; }
  // Forgets the endpoint without closing it (see UcxProbeSide's quarantine).
  void Abandon() noexcept { endpoint_ = nullptr; }

  // Closes now (no-op when empty). Outstanding operations complete (flush) or complete with
  // UCS_ERR_CANCELED (force) before this returns, unless `limit` passes first, in which case the
  // close request is abandoned to the worker and UCS_ERR_TIMED_OUT returned.
  static constexpr std::chrono::milliseconds kDefaultCloseLimit{1000};
  ucs_status_t Close(bool force, std::chrono::nanoseconds limit) noexcept;

 private:
  ucp_worker_h worker_ = nullptr;
  ucp_ep_h endpoint_ = nullptr;
  bool failed_ = false;
};

// The one endpoint of a side, created in error handling mode PEER so that a dead peer becomes an
// error instead of a hang; its error handler records the status, after which only a forced close
// is possible. Not movable: UCX holds its address for the error handler.
class UcxPeerEndpoint {
 public:
  UcxPeerEndpoint() = default;
  UcxPeerEndpoint(const UcxPeerEndpoint&) = delete;
  UcxPeerEndpoint& operator=(const UcxPeerEndpoint&) = delete;

  // Replaces any previous endpoint (closed, by force after an error) with one to the peer's
  // worker at `address` (the unframed address). Does not wait for the peer: wire-up completes
  // during the first operation.
  bool Connect(ucp_worker_h worker, const std::string& address, std::string* error_reason,
               std::string* error_message);
  // Closes, by force when `force` or after an endpoint error; a no-op when not connected.
  void Close(bool force, std::chrono::nanoseconds limit = UcxEndpoint::kDefaultCloseLimit);
  // Forgets the endpoint without closing it (a quarantined side's).
  void Leak();

  ucp_ep_h get() const { return endpoint_.get(); }
  explicit operator bool() const { return static_cast<bool>(endpoint_); }
  // UCS_OK unless the endpoint reported an error since it was created.
  ucs_status_t status() const { return status_; }
  bool failed() const { return status_ != UCS_OK; }
  // ucp_ep_print_info of the endpoint; "" when not connected.
  std::string InfoText() const;

 private:
  static void OnError(void* arg, ucp_ep_h endpoint, ucs_status_t status) noexcept;

  UcxEndpoint endpoint_;
  ucs_status_t status_ = UCS_OK;  // set by OnError
};

}  // namespace rail::probe
