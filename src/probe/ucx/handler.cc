#include "probe/ucx/handler.h"

#include <algorithm>

#include "probe/probe_run.h"
#include "probe/ucx/gpu_placement.h"
#include "rail/peer/encoding.h"
#include "rail/probe/ucx.h"

namespace rail::probe {

using nlohmann::json;

bool UcxHandler::Admit(const peer::ProbeSetup& request, std::string* reason,
                       std::string* message) const {
  if (rails_.empty()) {
    return detail::Fail(reason, message, "unknown_kind", "no local rail for this probe");
  }
  if (request.ucx_worker_address.empty()) {
    return detail::Fail(
        reason, message, "malformed",
        std::string(ProbeKindName(kind_)) + " needs the initiator's ucx_worker_address");
  }
  // FromJson guarantees at least one size, each positive.
  const std::uint64_t size =
      *std::max_element(request.message_sizes_bytes.begin(), request.message_sizes_bytes.end());
  if (size > kUcxMaxMessageBytes) {
    return detail::Fail(reason, message, "limit",
                        "message size " + std::to_string(size) + " exceeds this responder's " +
                            std::to_string(kUcxMaxMessageBytes) + " bytes");
  }
  return true;
}

bool UcxHandler::ChooseMemory(const peer::ProbeSetup& request, SideMemory* memory,
                              std::string* reason, std::string* message) {
  if (request.memory.empty()) return true;
  const std::optional<gpu::MemoryType> type = gpu::ParseMemoryType(request.memory);
  if (!type) {
    return detail::Fail(reason, message, "malformed",
                        "unknown memory type '" + request.memory + "' (host, cuda, cuda_host)");
  }
  memory->type = *type;
  if (*type == gpu::MemoryType::kHost) return true;
  if (!TakesMemoryType(kind_)) {
    return detail::Fail(reason, message, "malformed",
                        std::string(ProbeKindName(kind_)) + " moves host memory only");
  }
  std::string error;
  const std::optional<detail::GpuPlacement> placement = detail::PlaceOnGpu(rails_.front(), &error);
  // "setup" is the token the peer knows; the driver's message says it was CUDA.
  if (!placement) return detail::Fail(reason, message, "setup", "cuda: responder: " + error);
  memory->gpu = placement->context;
  gpu_pci_bus_id_ = placement->pci_bus_id;
  return true;
}

bool UcxHandler::Setup(const peer::ProbeSetup& request, json* reply_fields, std::string* reason,
                       std::string* message) {
  const double cpu_start = ThreadCpuSeconds();
  if (!Admit(request, reason, message)) return false;
  const std::uint64_t size =
      *std::max_element(request.message_sizes_bytes.begin(), request.message_sizes_bytes.end());
  // The initiator's UCX_TLS does not travel: the default keeps memory transports out, and the
  // initiator's worker address offers only the transports it chose anyway.
  const UcxContextSpec spec = detail::UcxSpecFor(rails_, "");
  SideMemory memory;
  if (!ChooseMemory(request, &memory, reason, message)) return false;
  message_bytes_ = static_cast<std::size_t>(size);
  std::string ucx_reason;
  std::string ucx_message;
  side_ =
      UcxProbeSide::Create(spec, static_cast<std::size_t>(size), &ucx_reason, &ucx_message, memory);
  // The peer sees a known token ("setup"); the UCX status travels in the message.
  if (!side_) {
    *reason = "setup";
    *message = ucx_reason + ": responder's UCX side over '" + detail::JoinRailNames(rails_) +
               "': " + ucx_message;
    return false;
  }
  if (!side_->Connect(request.ucx_worker_address, &ucx_reason, &ucx_message)) {
    *reason = ucx_reason == "invalid_blob" ? "malformed" : "setup";
    *message = ucx_reason + ": connecting to the initiator's worker: " + ucx_message;
    side_.reset();
    return false;
  }
  json devices = json::array();
  for (const std::string& device : spec.net_devices) devices.push_back(device);
  (*reply_fields)["ucx_worker_address"] = peer::Base64Encode(side_->WorkerAddress());
  (*reply_fields)["ucx_rkey"] = peer::Base64Encode(side_->PackedRkey());
  (*reply_fields)["buffer_address"] = side_->BufferAddress();
  (*reply_fields)["buffer_bytes"] = side_->BufferBytes();
  (*reply_fields)["devices"] = std::move(devices);
  (*reply_fields)["memory"] = gpu::MemoryTypeName(side_->memory_type());
  (*reply_fields)["memory_path"] = side_->staged() ? "staged" : "direct";
  if (!gpu_pci_bus_id_.empty()) (*reply_fields)["gpu_pci_bus_id"] = gpu_pci_bus_id_;
  cpu_seconds_ += ThreadCpuSeconds() - cpu_start;
  return true;
}

void UcxHandler::Serve(const std::atomic<bool>& stop) {
  if (!side_) return;
  const double cpu_start = ThreadCpuSeconds();
  side_->Serve(stop, kUcxServeBusyUntilIdle);
  // The initiator closed its endpoint politely before probe_done (that needed this side's
  // progress); this side's close needs nothing from the peer when forced.
  side_->Disconnect(UcxProbeSide::CloseMode::kForce);
  counters_ = side_->Counters();
  // Timed after the transfer, so that the copies never compete with it.
  if (side_->staged()) staging_ = side_->MeasureStagingCopies(message_bytes_);
  cpu_seconds_ += ThreadCpuSeconds() - cpu_start;
}

json UcxHandler::Report() {
  json report{{"cpu_seconds", cpu_seconds_},
              {"pings_echoed", counters_.pings_echoed},
              {"am_messages", counters_.am_messages},
              {"am_bytes", counters_.am_bytes},
              {"errors", counters_.errors}};
  if (!counters_.last_error.empty()) report["last_error"] = counters_.last_error;
  if (staging_) {
    report["staging_to_device_bytes_per_second"] = staging_->to_device_bytes_per_second;
    report["staging_to_host_bytes_per_second"] = staging_->to_host_bytes_per_second;
    if (!staging_->error.empty()) report["staging_error"] = staging_->error;
  }
  return report;
}

}  // namespace rail::probe
