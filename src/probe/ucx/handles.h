// RAII wrappers for UCX handles, and the error reporting every UCX file of the probe layer shares.
// Each wrapper is move-only and releases its handle with the matching UCX call; handles whose
// release needs their parent (a worker address needs its worker, a memory mapping its context)
// carry that parent along. Release order between handles is the owner's job: the owners declare
// their members so that children die before their parents.
#pragma once

#include <ucp/api/ucp.h>

#include <cstddef>
#include <string>
#include <utility>

namespace rail::probe {

namespace detail {
struct NoOwner {};
void ReleaseConfig(NoOwner, ucp_config_t* config) noexcept;
void ReleaseContext(NoOwner, ucp_context_h context) noexcept;
void ReleaseWorker(NoOwner, ucp_worker_h worker) noexcept;
void ReleaseWorkerAddress(ucp_worker_h worker, ucp_address_t* address) noexcept;
void ReleaseMemory(ucp_context_h context, ucp_mem_h memory) noexcept;
void ReleaseRkeyBuffer(NoOwner, void* rkey_buffer) noexcept;
void ReleaseRemoteKey(NoOwner, ucp_rkey_h rkey) noexcept;

// "ucx:" + ucs_status_string(status).
std::string UcxReason(ucs_status_t status);

// Writes the outputs of a failed call, either of which may be null; returns false so that a
// caller can `return Fail(...)`.
bool Fail(std::string* error_reason, std::string* error_message, std::string reason,
          std::string message);
// Fail with UcxReason(status) and "<what>: <status text>".
bool FailUcx(std::string* error_reason, std::string* error_message, ucs_status_t status,
             const std::string& what);

// Keeps a handle reachable for the life of the process. Quarantined sides (see
// UcxProbeSide::AbortEndpoint) leak their handles on purpose; kept here, a leak checker
// (LeakSanitizer in scripts/sanitize) tells them from a real leak.
void KeepForever(const void* handle);
}  // namespace detail

template <typename Handle, typename Owner, void (*Release)(Owner, Handle) noexcept>
class UcxUnique {
 public:
  UcxUnique() = default;
  UcxUnique(Owner owner, Handle handle) noexcept : owner_(owner), handle_(handle) {}
  ~UcxUnique() { reset(); }
  UcxUnique(const UcxUnique&) = delete;
  UcxUnique& operator=(const UcxUnique&) = delete;
  UcxUnique(UcxUnique&& other) noexcept : owner_(other.owner_), handle_(other.release()) {}
  UcxUnique& operator=(UcxUnique&& other) noexcept {
    if (this != &other) {
      reset();
      owner_ = other.owner_;
      handle_ = other.release();
    }
    return *this;
  }

  Handle get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != Handle{}; }
  void reset() noexcept {
    if (handle_ != Handle{}) Release(owner_, handle_);
    handle_ = Handle{};
  }
  Handle release() noexcept { return std::exchange(handle_, Handle{}); }

 private:
  Owner owner_{};
  Handle handle_{};
};

using UcxConfig = UcxUnique<ucp_config_t*, detail::NoOwner, detail::ReleaseConfig>;
using UcxContext = UcxUnique<ucp_context_h, detail::NoOwner, detail::ReleaseContext>;
using UcxWorker = UcxUnique<ucp_worker_h, detail::NoOwner, detail::ReleaseWorker>;
using UcxMemory = UcxUnique<ucp_mem_h, ucp_context_h, detail::ReleaseMemory>;
using UcxRemoteKey = UcxUnique<ucp_rkey_h, detail::NoOwner, detail::ReleaseRemoteKey>;

// A packed buffer together with its length (worker address, packed remote key).
template <typename Unique>
struct UcxPackedBlob {
  Unique handle;
  std::size_t length = 0;
};
using UcxWorkerAddress =
    UcxPackedBlob<UcxUnique<ucp_address_t*, ucp_worker_h, detail::ReleaseWorkerAddress>>;
using UcxRkeyBuffer = UcxPackedBlob<UcxUnique<void*, detail::NoOwner, detail::ReleaseRkeyBuffer>>;

}  // namespace rail::probe
