// Setting up one side of a UCX probe and tearing it down; the endpoint to the peer and the
// peer's memory; what the endpoint really uses.
#include "probe/ucx/side.h"

#include <optional>

#include "probe/ucx/blob.h"
#include "rail/probe/ucx_lanes.h"

namespace rail::probe {

std::unique_ptr<UcxProbeSide> UcxProbeSide::Create(const UcxContextSpec& spec,
                                                   std::size_t buffer_bytes,
                                                   std::string* error_reason,
                                                   std::string* error_message) {
  if (buffer_bytes == 0 || spec.max_rndv_rails == 0) {
    detail::Fail(error_reason, error_message, "invalid_argument",
                 "buffer_bytes and max_rndv_rails must be positive");
    return nullptr;
  }
  if (spec.net_devices.size() > 1 && QuarantinedSides() >= kMaxQuarantinedSides) {
    detail::Fail(
        error_reason, error_message, "ucx:quarantine",
        "too many multi-device UCX contexts were left behind after stalled peers (UCX 1.13 "
        "cannot close them safely); restart the agent to run multi-rail UCX probes again");
    return nullptr;
  }
  std::unique_ptr<UcxProbeSide> side(new UcxProbeSide());
  side->spec_ = spec;
  side->context_ = detail::CreateUcxContext(spec, error_reason, error_message);
  if (!side->context_) return nullptr;
  if (!side->worker_.Create(side->context_.get(), error_reason, error_message) ||
      !side->buffer_.Map(side->context_.get(), buffer_bytes, error_reason, error_message) ||
      !side->RegisterAmHandler(error_reason, error_message)) {
    return nullptr;
  }
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
  if (status != UCS_OK) {
    return detail::FailUcx(error_reason, error_message, status, "set AM handler");
  }
  return true;
}

UcxProbeSide::~UcxProbeSide() {
  // Torn down explicitly, children first, while every member a UCX callback may still touch
  // (trackers, counters, receive states) is alive: closing the endpoint and destroying the
  // worker may complete requests.
  if (!worker_) return;
  if (quarantined_) {
    // Nothing may touch these handles again (see AbortEndpoint): leak them.
    remote_.Leak();
    endpoint_.Leak();
    buffer_.Leak();
    worker_.Leak();
    detail::KeepForever(context_.release());
    return;
  }
  remote_.reset();
  endpoint_.Close(/*force=*/false);
  detail::CancelTagReceive(worker_.get(), &ping_);
  detail::CancelTagReceive(worker_.get(), &pong_);
  buffer_.reset();
  worker_.reset();
  context_.reset();
}

bool UcxProbeSide::Connect(const std::string& remote_worker_address, std::string* error_reason,
                           std::string* error_message) {
  std::string why;
  const std::optional<std::string> address = detail::UnframeBlob('W', remote_worker_address, &why);
  if (!address) return detail::Fail(error_reason, error_message, "invalid_blob", why);
  // A remote key belongs to the endpoint it was unpacked on.
  remote_.reset();
  return endpoint_.Connect(worker_.get(), *address, error_reason, error_message);
}

void UcxProbeSide::Disconnect(CloseMode mode, std::chrono::nanoseconds limit) {
  remote_.reset();
  endpoint_.Close(mode == CloseMode::kForce, limit);
}

bool UcxProbeSide::SetRemoteMemory(const std::string& packed_rkey, std::uint64_t remote_address,
                                   std::size_t remote_bytes, std::string* error_reason,
                                   std::string* error_message) {
  if (!endpoint_) {
    return detail::Fail(error_reason, error_message, "not_connected",
                        "SetRemoteMemory needs an endpoint: call Connect first");
  }
  return remote_.Unpack(endpoint_.get(), packed_rkey, remote_address, remote_bytes, error_reason,
                        error_message);
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

}  // namespace rail::probe
