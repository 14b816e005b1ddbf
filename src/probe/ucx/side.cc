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
                                                   std::string* error_message,
                                                   const SideMemory& memory) {
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
      !side->MapBuffer(buffer_bytes, memory, error_reason, error_message) ||
      !side->RegisterAmHandler(error_reason, error_message)) {
    return nullptr;
  }
  return side;
}

bool UcxProbeSide::MapBuffer(std::size_t bytes, const SideMemory& memory, std::string* error_reason,
                             std::string* error_message) {
  memory_type_ = memory.type;
  if (memory.type == gpu::MemoryType::kHost) {
    return buffer_.Map(context_.get(), bytes, error_reason, error_message);
  }
  if (memory.gpu == nullptr) {
    return detail::Fail(error_reason, error_message, "invalid_argument",
                        "GPU memory needs a device context");
  }
  gpu_ = memory.gpu;
  std::string error;
  if (memory.type == gpu::MemoryType::kCuda) {
    device_buffer_ = gpu_->Allocate(gpu::MemoryType::kCuda, bytes, &error);
    if (!device_buffer_) {
      return detail::Fail(error_reason, error_message, "cuda",
                          std::to_string(bytes) + " bytes of device memory: " + error);
    }
    if (detail::UcxTakesMemoryType(context_.get(), UCS_MEMORY_TYPE_CUDA)) {
      return buffer_.Register(context_.get(), device_buffer_->data(), bytes, UCS_MEMORY_TYPE_CUDA,
                              error_reason, error_message);
    }
    staged_ = true;
  }
  pinned_buffer_ = gpu_->Allocate(gpu::MemoryType::kCudaHost, bytes, &error);
  if (!pinned_buffer_) {
    return detail::Fail(error_reason, error_message, "cuda",
                        std::to_string(bytes) + " bytes of pinned host memory: " + error);
  }
  return buffer_.Register(context_.get(), pinned_buffer_->data(), bytes, UCS_MEMORY_TYPE_HOST,
                          error_reason, error_message);
}

bool UcxProbeSide::StageForOperation(UcxOperation operation, std::size_t message_bytes) {
  if (!staged_) return true;
  if (!staging_error_.empty()) return false;
  std::string error;
  const bool copied =
      operation == UcxOperation::kGet
          ? gpu_->CopyToDevice(*device_buffer_, 0, pinned_buffer_->data(), message_bytes, &error)
          : gpu_->CopyToHost(pinned_buffer_->data(), *device_buffer_, 0, message_bytes, &error);
  if (!copied)
    staging_error_ = "staging copy of " + std::to_string(message_bytes) + " bytes: " + error;
  return copied;
}

StagingCopyRates UcxProbeSide::MeasureStagingCopies(std::size_t message_bytes) {
  StagingCopyRates rates;
  if (!staged_ || message_bytes == 0 || message_bytes > buffer_.bytes()) return rates;
  const auto sample = [&](bool to_device) -> double {
    const Clock::time_point start = Clock::now();
    const Clock::time_point stop = start + kStagingSampleTime;
    std::uint64_t copied = 0;
    do {
      std::string error;
      const bool ok = to_device ? gpu_->CopyToDevice(*device_buffer_, 0, pinned_buffer_->data(),
                                                     message_bytes, &error)
                                : gpu_->CopyToHost(pinned_buffer_->data(), *device_buffer_, 0,
                                                   message_bytes, &error);
      if (!ok) {
        rates.error = error;
        return 0;
      }
      copied += message_bytes;
    } while (Clock::now() < stop);
    const double seconds = SecondsBetween(start, Clock::now());
    return seconds > 0 ? static_cast<double>(copied) / seconds : 0;
  };
  rates.to_device_bytes_per_second = sample(true);
  if (rates.error.empty()) rates.to_host_bytes_per_second = sample(false);
  return rates;
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
    // The leaked mapping still names this memory.
    detail::KeepForever(device_buffer_.release());
    detail::KeepForever(pinned_buffer_.release());
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
