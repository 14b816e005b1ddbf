// Setting up one side of a UCX probe: context, worker, registered buffer, the endpoint to the peer
// and the peer's memory; teardown; what the endpoint really uses.
#include "rail/probe/ucx_session.h"

#include <stdio.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "rail/probe/ucx_lanes.h"

namespace rail::probe {

namespace {

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string joined;
  for (const std::string& item : items) {
    if (!joined.empty()) joined.append(separator);
    joined.append(item);
  }
  return joined;
}

// Writes the outputs of a failed call, either of which may be null; returns false for brevity.
bool Fail(std::string* error_reason, std::string* error_message, std::string reason,
          std::string message) {
  if (error_reason != nullptr) *error_reason = std::move(reason);
  if (error_message != nullptr) *error_message = std::move(message);
  return false;
}

bool FailUcx(std::string* error_reason, std::string* error_message, ucs_status_t status,
             const std::string& what) {
  return Fail(error_reason, error_message, detail::UcxReason(status),
              what + ": " + ucs_status_string(status));
}

// The handles of quarantined sides (see AbortEndpoint), which are leaked on purpose, stay
// reachable from here for the life of the process, so that a leak checker (LeakSanitizer in
// scripts/sanitize) tells them from a real leak. At most kMaxQuarantinedSides sides' worth.
void KeepForever(const void* handle) {
  static std::mutex mutex;
  static auto* const kept = new std::vector<const void*>();
  const std::lock_guard lock(mutex);
  if (handle != nullptr) kept->push_back(handle);
}

}  // namespace

std::unique_ptr<UcxProbeSide> UcxProbeSide::Create(const UcxContextSpec& spec,
                                                   std::size_t buffer_bytes,
                                                   std::string* error_reason,
                                                   std::string* error_message) {
  if (buffer_bytes == 0 || spec.max_rndv_rails == 0) {
    Fail(error_reason, error_message, "invalid_argument",
         "buffer_bytes and max_rndv_rails must be positive");
    return nullptr;
  }
  if (spec.net_devices.size() > 1 && QuarantinedSides() >= kMaxQuarantinedSides) {
    Fail(error_reason, error_message, "ucx:quarantine",
         "too many multi-device UCX contexts were left behind after stalled peers (UCX 1.13 "
         "cannot close them safely); restart the agent to run multi-rail UCX probes again");
    return nullptr;
  }
  std::unique_ptr<UcxProbeSide> side(new UcxProbeSide());
  side->spec_ = spec;
  side->buffer_bytes_ = buffer_bytes;

  // UCX_* variables of the environment still apply; the spec overrides them key by key, so
  // that one process can hold contexts restricted to different rails.
  ucp_config_t* raw_config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &raw_config);
  if (status != UCS_OK) {
    FailUcx(error_reason, error_message, status, "ucp_config_read");
    return nullptr;
  }
  const UcxConfig config(detail::NoOwner{}, raw_config);
  std::vector<std::pair<std::string, std::string>> settings;
  if (!spec.net_devices.empty()) settings.emplace_back("NET_DEVICES", Join(spec.net_devices, ","));
  if (!spec.transports.empty()) settings.emplace_back("TLS", spec.transports);
  settings.emplace_back("MAX_RNDV_RAILS", std::to_string(spec.max_rndv_rails));
  for (const auto& [key, value] : spec.extra_config) {
    settings.emplace_back(key.starts_with("UCX_") ? key.substr(4) : key, value);
  }
  for (const auto& [key, value] : settings) {
    status = ucp_config_modify(config.get(), key.c_str(), value.c_str());
    if (status != UCS_OK) {
      FailUcx(error_reason, error_message, status, "ucp_config_modify(" + key + "=" + value + ")");
      return nullptr;
    }
  }

  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                      UCP_PARAM_FIELD_ESTIMATED_NUM_EPS | UCP_PARAM_FIELD_NAME;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_TAG | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  params.estimated_num_eps = 1;
  params.name = "rail_probe";
  ucp_context_h raw_context = nullptr;
  status = ucp_init(&params, config.get(), &raw_context);
  if (status != UCS_OK) {
    FailUcx(error_reason, error_message, status,
            "ucp_init (devices '" + Join(spec.net_devices, ",") + "', transports '" +
                spec.transports + "')");
    return nullptr;
  }
  side->context_ = UcxContext(detail::NoOwner{}, raw_context);

  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  ucp_worker_h raw_worker = nullptr;
  status = ucp_worker_create(raw_context, &worker_params, &raw_worker);
  if (status != UCS_OK) {
    FailUcx(error_reason, error_message, status, "ucp_worker_create");
    return nullptr;
  }
  side->worker_ = UcxWorker(detail::NoOwner{}, raw_worker);

  ucp_address_t* address = nullptr;
  std::size_t address_length = 0;
  status = ucp_worker_get_address(raw_worker, &address, &address_length);
  if (status != UCS_OK) {
    FailUcx(error_reason, error_message, status, "ucp_worker_get_address");
    return nullptr;
  }
  side->worker_address_.handle = {raw_worker, address};
  side->worker_address_.length = address_length;
  side->worker_address_blob_ = detail::FrameBlob(
      'W', std::string_view(reinterpret_cast<const char*>(address), address_length));

  status = ucp_worker_get_efd(raw_worker, &side->event_fd_);
  if (status != UCS_OK) {
    FailUcx(error_reason, error_message, status, "ucp_worker_get_efd");
    return nullptr;
  }

  // UCX allocates the buffer itself, so that it can pick memory its transports register best.
  ucp_mem_map_params_t map_params{};
  map_params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                          UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  map_params.address = nullptr;
  map_params.length = buffer_bytes;
  map_params.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h raw_memory = nullptr;
  status = ucp_mem_map(raw_context, &map_params, &raw_memory);
  if (status != UCS_OK) {
    FailUcx(error_reason, error_message, status,
            "ucp_mem_map of " + std::to_string(buffer_bytes) + " bytes");
    return nullptr;
  }
  side->memory_ = UcxMemory(raw_context, raw_memory);
  ucp_mem_attr_t memory_attributes{};
  memory_attributes.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
  status = ucp_mem_query(raw_memory, &memory_attributes);
  if (status != UCS_OK) {
    FailUcx(error_reason, error_message, status, "ucp_mem_query");
    return nullptr;
  }
  side->buffer_ = memory_attributes.address;
  // Touch every page now, so that page faults do not land in the first timed operation.
  std::memset(side->buffer_, 0, buffer_bytes);

  void* rkey_buffer = nullptr;
  std::size_t rkey_length = 0;
  status = ucp_rkey_pack(raw_context, raw_memory, &rkey_buffer, &rkey_length);
  if (status != UCS_OK) {
    FailUcx(error_reason, error_message, status, "ucp_rkey_pack");
    return nullptr;
  }
  side->rkey_buffer_.handle = {detail::NoOwner{}, rkey_buffer};
  side->rkey_buffer_.length = rkey_length;
  side->packed_rkey_blob_ =
      detail::FrameBlob('K', std::string_view(static_cast<const char*>(rkey_buffer), rkey_length));

  if (!side->RegisterAmHandler(error_reason, error_message)) return nullptr;
  return side;
}

bool UcxProbeSide::RegisterAmHandler(std::string* error_reason, std::string* error_message) {
  ucp_am_handler_param_t param{};
  param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                     UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
  param.id = kProbeAmId;
  param.flags = UCP_AM_FLAG_WHOLE_MSG;
  param.cb = &UcxProbeSide::OnAmMessage;
  param.arg = this;
  const ucs_status_t status = ucp_worker_set_am_recv_handler(worker_.get(), &param);
  if (status != UCS_OK) return FailUcx(error_reason, error_message, status, "set AM handler");
  return true;
}

UcxProbeSide::~UcxProbeSide() {
  // Torn down explicitly, children first, while every member a UCX callback may still touch
  // (trackers, counters, receive states) is alive: closing the endpoint and destroying the
  // worker may complete requests.
  if (!worker_) return;
  if (quarantined_) {
    // Nothing may touch these handles again (see AbortEndpoint): leak them.
    KeepForever(remote_key_.release());
    KeepForever(endpoint_.get());
    endpoint_.Abandon();
    KeepForever(rkey_buffer_.handle.release());
    KeepForever(memory_.release());
    KeepForever(worker_address_.handle.release());
    KeepForever(worker_.release());
    KeepForever(context_.release());
    return;
  }
  remote_key_.reset();
  endpoint_.Close(endpoint_status_ != UCS_OK, UcxEndpoint::kDefaultCloseLimit);
  CancelTagReceive(&ping_);
  CancelTagReceive(&pong_);
  rkey_buffer_.handle.reset();
  memory_.reset();
  worker_address_.handle.reset();
  worker_.reset();
  context_.reset();
}

std::uint64_t UcxProbeSide::BufferAddress() const {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(buffer_));
}

bool UcxProbeSide::Connect(const std::string& remote_worker_address, std::string* error_reason,
                           std::string* error_message) {
  std::string why;
  const std::optional<std::string> address = detail::UnframeBlob('W', remote_worker_address, &why);
  if (!address) return Fail(error_reason, error_message, "invalid_blob", why);

  // A remote key belongs to the endpoint it was unpacked on.
  remote_key_.reset();
  remote_address_ = 0;
  remote_bytes_ = 0;
  endpoint_.Close(endpoint_status_ != UCS_OK, UcxEndpoint::kDefaultCloseLimit);
  endpoint_status_ = UCS_OK;

  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(address->data());
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = &UcxProbeSide::OnEndpointError;
  params.err_handler.arg = this;
  ucp_ep_h endpoint = nullptr;
  const ucs_status_t status = ucp_ep_create(worker_.get(), &params, &endpoint);
  if (status != UCS_OK) return FailUcx(error_reason, error_message, status, "ucp_ep_create");
  endpoint_ = UcxEndpoint(worker_.get(), endpoint);
  return true;
}

void UcxProbeSide::Disconnect(CloseMode mode, std::chrono::nanoseconds limit) {
  remote_key_.reset();
  remote_address_ = 0;
  remote_bytes_ = 0;
  endpoint_.Close(mode == CloseMode::kForce || endpoint_status_ != UCS_OK, limit);
}

bool UcxProbeSide::SetRemoteMemory(const std::string& packed_rkey, std::uint64_t remote_address,
                                   std::size_t remote_bytes, std::string* error_reason,
                                   std::string* error_message) {
  if (!endpoint_) {
    return Fail(error_reason, error_message, "not_connected",
                "SetRemoteMemory needs an endpoint: call Connect first");
  }
  std::string why;
  const std::optional<std::string> rkey_bytes = detail::UnframeBlob('K', packed_rkey, &why);
  if (!rkey_bytes) return Fail(error_reason, error_message, "invalid_blob", why);
  remote_key_.reset();
  ucp_rkey_h rkey = nullptr;
  const ucs_status_t status = ucp_ep_rkey_unpack(endpoint_.get(), rkey_bytes->data(), &rkey);
  if (status != UCS_OK) return FailUcx(error_reason, error_message, status, "ucp_ep_rkey_unpack");
  remote_key_ = UcxRemoteKey(detail::NoOwner{}, rkey);
  remote_address_ = remote_address;
  remote_bytes_ = remote_bytes;
  return true;
}

std::string UcxProbeSide::EndpointInfoText() {
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

std::vector<std::pair<std::string, std::string>> UcxProbeSide::LaneTransports(std::string* error) {
  std::string why = "not connected";
  const std::string text = EndpointInfoText();
  if (!text.empty()) {
    if (const std::optional<UcxEndpointInfo> info = ParseEpPrintInfo(text, &why)) {
      return TransportDevices(*info);
    }
  }
  if (error != nullptr) *error = why;
  return {};
}

void UcxProbeSide::OperationTracker::Complete(ucs_status_t status) noexcept {
  ++completed;
  if (status != UCS_OK) {
    ++failed;
    if (first_error == UCS_OK) first_error = status;
  }
}

void UcxProbeSide::OnEndpointError(void* arg, ucp_ep_h endpoint, ucs_status_t status) noexcept {
  auto* self = static_cast<UcxProbeSide*>(arg);
  // Errors of an endpoint that was already replaced do not concern the current one.
  if (endpoint != self->endpoint_.get()) return;
  self->endpoint_status_ = status;
  self->endpoint_.MarkFailed();
}

void UcxProbeSide::OnSendComplete(void* request, ucs_status_t status, void* user_data) noexcept {
  static_cast<OperationTracker*>(user_data)->Complete(status);
  ucp_request_free(request);
}

void UcxProbeSide::OnTagReceived(void* request, ucs_status_t status,
                                 const ucp_tag_recv_info_t* info, void* user_data) noexcept {
  auto* state = static_cast<TagReceiveState*>(user_data);
  state->status = status;
  if (info != nullptr) state->info = *info;
  state->done = true;
  state->request = nullptr;
  ucp_request_free(request);
}

bool UcxProbeSide::PostTagReceive(TagReceiveState* state, void* buffer, std::size_t bytes,
                                  ucp_tag_t tag) {
  *state = TagReceiveState{};
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_RECV_INFO;
  param.cb.recv = &UcxProbeSide::OnTagReceived;
  param.user_data = state;
  param.recv_info.tag_info = &state->info;
  void* request = ucp_tag_recv_nbx(worker_.get(), buffer, bytes, tag, kFullTagMask, &param);
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

void UcxProbeSide::CancelTagReceive(TagReceiveState* state) {
  if (state->request == nullptr) return;
  ucp_request_cancel(worker_.get(), state->request);
  // The callback reports UCS_ERR_CANCELED, normally during the cancel itself.
  const auto deadline = std::chrono::steady_clock::now() + UcxEndpoint::kDefaultCloseLimit;
  while (state->request != nullptr && std::chrono::steady_clock::now() < deadline) {
    ucp_worker_progress(worker_.get());
  }
  state->done = false;
}

namespace {
std::atomic<int> quarantined_sides{0};
}  // namespace

int UcxProbeSide::QuarantinedSides() {
  return quarantined_sides.load();
}

std::string UcxProbeSide::AbortEndpoint() {
  std::string undrained;
  const bool drained = DrainAfterAbort(&undrained);
  // UCX 1.13.1's assertion needs operations outstanding on a multi-lane endpoint; a drained side
  // has none, so only an undrained multi-device side must be quarantined.
  if (!drained && spec_.net_devices.size() > 1) {
    quarantined_ = true;
    ++quarantined_sides;
    KeepForever(endpoint_.get());
    endpoint_.Abandon();
    KeepForever(remote_key_.release());
    remote_address_ = 0;
    remote_bytes_ = 0;
    return undrained;
  }
  // Forced close first: it completes every request still in UCX's hands (some use the remote
  // key), then the key can go.
  endpoint_.Close(/*force=*/true, UcxEndpoint::kDefaultCloseLimit);
  remote_key_.reset();
  remote_address_ = 0;
  remote_bytes_ = 0;
  return undrained;
}

}  // namespace rail::probe
