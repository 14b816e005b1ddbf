#include "probe/ucx/progress_worker.h"

#include <poll.h>

#include <string_view>

#include "probe/ucx/blob.h"

namespace rail::probe {

bool UcxProgressWorker::Create(ucp_context_h context, std::string* error_reason,
                               std::string* error_message) {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  ucp_worker_h raw_worker = nullptr;
  ucs_status_t status = ucp_worker_create(context, &params, &raw_worker);
  if (status != UCS_OK) {
    return detail::FailUcx(error_reason, error_message, status, "ucp_worker_create");
  }
  worker_ = UcxWorker(detail::NoOwner{}, raw_worker);

  ucp_address_t* address = nullptr;
  std::size_t address_length = 0;
  status = ucp_worker_get_address(raw_worker, &address, &address_length);
  if (status != UCS_OK) {
    return detail::FailUcx(error_reason, error_message, status, "ucp_worker_get_address");
  }
  address_.handle = {raw_worker, address};
  address_.length = address_length;
  address_blob_ = detail::FrameBlob(
      'W', std::string_view(reinterpret_cast<const char*>(address), address_length));

  status = ucp_worker_get_efd(raw_worker, &event_fd_);
  if (status != UCS_OK) {
    return detail::FailUcx(error_reason, error_message, status, "ucp_worker_get_efd");
  }
  return true;
}

bool UcxProgressWorker::SleepUntilEvent(std::chrono::milliseconds timeout,
                                        ucs_status_t* arm_status) {
  *arm_status = ucp_worker_arm(worker_.get());
  if (*arm_status == UCS_ERR_BUSY) return false;
  if (*arm_status != UCS_OK) timeout = kUnarmableSleep;
  pollfd descriptor{};
  descriptor.fd = event_fd_;
  descriptor.events = POLLIN;
  return poll(&descriptor, 1, static_cast<int>(timeout.count())) > 0;
}

void UcxProgressWorker::Signal() {
  ucp_worker_signal(worker_.get());
}

void UcxProgressWorker::reset() {
  address_.handle.reset();
  worker_.reset();
}

void UcxProgressWorker::Leak() {
  detail::KeepForever(address_.handle.release());
  detail::KeepForever(worker_.release());
}

}  // namespace rail::probe
