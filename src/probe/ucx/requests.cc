#include "probe/ucx/requests.h"

#include <chrono>

#include "probe/ucx/endpoint.h"

namespace rail::probe {

namespace {

void OnSendComplete(void* request, ucs_status_t status, void* user_data) noexcept {
  static_cast<OperationTracker*>(user_data)->Complete(status);
  ucp_request_free(request);
}

void OnTagReceived(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info,
                   void* user_data) noexcept {
  auto* state = static_cast<TagReceiveState*>(user_data);
  state->status = status;
  if (info != nullptr) state->info = *info;
  state->done = true;
  state->request = nullptr;
  ucp_request_free(request);
}

}  // namespace

void OperationTracker::Complete(ucs_status_t status) noexcept {
  ++completed;
  if (status != UCS_OK) {
    ++failed;
    if (first_error == UCS_OK) first_error = status;
  }
}

ucp_request_param_t OperationTracker::SendParam() noexcept {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &OnSendComplete;
  param.user_data = this;
  return param;
}

bool OperationTracker::Track(void* request) noexcept {
  if (request == nullptr) {
    Complete(UCS_OK);
    return true;
  }
  if (UCS_PTR_IS_ERR(request)) {
    Complete(UCS_PTR_STATUS(request));
    return false;
  }
  return true;
}

namespace detail {

bool PostTagReceive(ucp_worker_h worker, TagReceiveState* state, void* buffer, std::size_t bytes,
                    ucp_tag_t tag) {
  *state = TagReceiveState{};
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_RECV_INFO;
  param.cb.recv = &OnTagReceived;
  param.user_data = state;
  param.recv_info.tag_info = &state->info;
  void* request = ucp_tag_recv_nbx(worker, buffer, bytes, tag, kFullTagMask, &param);
  if (request == nullptr) {  // the message was already there
    state->done = true;
    return true;
  }
  if (UCS_PTR_IS_ERR(request)) {
    state->done = true;
    state->status = UCS_PTR_STATUS(request);
    return false;
  }
  state->request = request;
  return true;
}

void CancelTagReceive(ucp_worker_h worker, TagReceiveState* state) {
  if (state->request == nullptr) return;
  ucp_request_cancel(worker, state->request);
  // The callback reports UCS_ERR_CANCELED, normally during the cancel itself.
  const auto deadline = std::chrono::steady_clock::now() + UcxEndpoint::kDefaultCloseLimit;
  while (state->request != nullptr && std::chrono::steady_clock::now() < deadline) {
    ucp_worker_progress(worker);
  }
  state->done = false;
}

}  // namespace detail

}  // namespace rail::probe
