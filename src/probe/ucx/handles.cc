#include "probe/ucx/handles.h"

#include <mutex>
#include <vector>

namespace rail::probe::detail {

void ReleaseConfig(NoOwner, ucp_config_t* config) noexcept {
  ucp_config_release(config);
}
void ReleaseContext(NoOwner, ucp_context_h context) noexcept {
  ucp_cleanup(context);
}
void ReleaseWorker(NoOwner, ucp_worker_h worker) noexcept {
  ucp_worker_destroy(worker);
}
void ReleaseWorkerAddress(ucp_worker_h worker, ucp_address_t* address) noexcept {
  ucp_worker_release_address(worker, address);
}
void ReleaseMemory(ucp_context_h context, ucp_mem_h memory) noexcept {
  ucp_mem_unmap(context, memory);
}
void ReleaseRkeyBuffer(NoOwner, void* rkey_buffer) noexcept {
  ucp_rkey_buffer_release(rkey_buffer);
}
void ReleaseRemoteKey(NoOwner, ucp_rkey_h rkey) noexcept {
  ucp_rkey_destroy(rkey);
}

std::string UcxReason(ucs_status_t status) {
  return std::string("ucx:") + ucs_status_string(status);
}

bool Fail(std::string* error_reason, std::string* error_message, std::string reason,
          std::string message) {
  if (error_reason != nullptr) *error_reason = std::move(reason);
  if (error_message != nullptr) *error_message = std::move(message);
  return false;
}

bool FailUcx(std::string* error_reason, std::string* error_message, ucs_status_t status,
             const std::string& what) {
  return Fail(error_reason, error_message, UcxReason(status),
              what + ": " + ucs_status_string(status));
}

// At most kMaxQuarantinedSides sides' worth of handles.
void KeepForever(const void* handle) {
  static std::mutex mutex;
  static auto* const kept = new std::vector<const void*>();
  const std::lock_guard lock(mutex);
  if (handle != nullptr) kept->push_back(handle);
}

}  // namespace rail::probe::detail
