#include "probe/ucx/endpoint.h"

#include <stdio.h>

#include <cstdlib>
#include <utility>

namespace rail::probe {

UcxEndpoint::UcxEndpoint(UcxEndpoint&& other) noexcept
    : worker_(other.worker_),
      endpoint_(std::exchange(other.endpoint_, nullptr)),
      failed_(other.failed_) {}

UcxEndpoint& UcxEndpoint::operator=(UcxEndpoint&& other) noexcept {
  if (this != &other) {
    Close(failed_, kDefaultCloseLimit);
    worker_ = other.worker_;
    endpoint_ = std::exchange(other.endpoint_, nullptr);
    failed_ = other.failed_;
  }
  return *this;
}

ucs_status_t UcxEndpoint::Close(bool force, std::chrono::nanoseconds limit) noexcept {
  ucp_ep_h endpoint = std::exchange(endpoint_, nullptr);
  failed_ = false;
  if (endpoint == nullptr) return UCS_OK;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  void* request = ucp_ep_close_nbx(endpoint, &param);
  if (request == nullptr) return UCS_OK;
  if (UCS_PTR_IS_ERR(request)) return UCS_PTR_STATUS(request);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  ucs_status_t status = UCS_INPROGRESS;
  while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS &&
         std::chrono::steady_clock::now() < deadline) {
    ucp_worker_progress(worker_);
  }
  // Freeing a request that is still in progress hands it to UCX, which releases it when it
  // completes (at the latest when the worker is destroyed).
  ucp_request_free(request);
  return status == UCS_INPROGRESS ? UCS_ERR_TIMED_OUT : status;
}

bool UcxPeerEndpoint::Connect(ucp_worker_h worker, const std::string& address,
                              std::string* error_reason, std::string* error_message) {
  Close(false);
  status_ = UCS_OK;
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(address.data());
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = &UcxPeerEndpoint::OnError;
  params.err_handler.arg = this;
  ucp_ep_h endpoint = nullptr;
  const ucs_status_t status = ucp_ep_create(worker, &params, &endpoint);
  if (status != UCS_OK) {
    return detail::FailUcx(error_reason, error_message, status, "ucp_ep_create");
  }
  endpoint_ = UcxEndpoint(worker, endpoint);
  return true;
}

void UcxPeerEndpoint::Close(bool force, std::chrono::nanoseconds limit) {
  endpoint_.Close(force || failed(), limit);
}

void UcxPeerEndpoint::Leak() {
  detail::KeepForever(endpoint_.get());
  endpoint_.Abandon();
}

std::string UcxPeerEndpoint::InfoText() const {
  if (!endpoint_) return {};
  char* text = nullptr;
  std::size_t size = 0;
  FILE* stream = open_memstream(&text, &size);
  if (stream == nullptr) return {};
  ucp_ep_print_info(endpoint_.get(), stream);
  std::fclose(stream);
  std::string result(text, size);
  std::free(text);
  return result;
}

void UcxPeerEndpoint::OnError(void* arg, ucp_ep_h endpoint, ucs_status_t status) noexcept {
  auto* self = static_cast<UcxPeerEndpoint*>(arg);
  // Errors of an endpoint that was already replaced do not concern the current one.
  if (endpoint != self->endpoint_.get()) return;
  self->status_ = status;
  self->endpoint_.MarkFailed();
}

}  // namespace rail::probe
