#include "probe/ucx/initiator.h"

#include <algorithm>

#include "rail/peer/encoding.h"

namespace rail::probe::detail {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::chrono::nanoseconds kLongestDrain = std::chrono::seconds(10);

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A blob of the peer's setup reply: base64 in a string field.
std::optional<std::string> ReplyBlob(const json& reply, const char* field, std::string* error) {
  const auto value = reply.find(field);
  if (value == reply.end() || !value->is_string()) {
    *error = std::string("the peer's setup reply has no ") + field;
    return std::nullopt;
  }
  std::optional<std::string> decoded = peer::Base64Decode(value->get<std::string>());
  if (!decoded) *error = std::string("the peer's ") + field + " is not base64";
  return decoded;
}

}  // namespace

std::uint64_t MessageSize(const ProbeParams& params, std::uint64_t default_size) {
  return params.message_sizes_bytes.empty() ? default_size : params.message_sizes_bytes[0];
}

std::optional<std::string> ValidateUcxParams(const ProbeParams& params, bool needs_window,
                                             std::uint64_t default_size) {
  const char* kind = ProbeKindName(params.kind);
  if (params.rails.empty()) return std::string(kind) + " needs at least one rail";
  std::vector<std::string> names;
  for (const ProbeRail& rail : params.rails) {
    // Without a device the context would not be restricted at all: UCX would pick any device.
    if (rail.ucx_device.empty()) return "rail '" + rail.name + "' has no UCX device";
    if (Contains(names, rail.name)) return "rail '" + rail.name + "' is listed twice";
    names.push_back(rail.name);
  }
  if (params.duration.count() <= 0) return "duration must be positive";
  if (params.timeout.count() <= 0) return "timeout must be positive";
  if (needs_window && params.window == 0) return "window must be at least 1";
  const std::uint64_t size = MessageSize(params, default_size);
  if (size == 0 || size > kUcxMaxMessageBytes) {
    return "message size must be between 1 and " + std::to_string(kUcxMaxMessageBytes) + " bytes";
  }
  return std::nullopt;
}

DeadlineWatchdog::DeadlineWatchdog(const ProbeDeadline& deadline)
    : deadline_(deadline), thread_([this] { Watch(); }) {}

DeadlineWatchdog::~DeadlineWatchdog() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DeadlineWatchdog::Watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (deadline_.Expired() || deadline_.Cancelled()) {
      fired_ = true;
      return;
    }
    wake_.wait_until(lock,
                     std::min(deadline_.deadline().at(), Clock::now() + kCancelCheckInterval));
  }
}

std::string ProbeAbortReason(const std::string& reason, const ProbeDeadline& deadline) {
  if (reason != "cancelled") return reason;
  if (deadline.Cancelled()) return "cancelled";
  return deadline.Expired() ? "timeout" : reason;
}

void BoundDrainTimeout(UcxProbeSide& side, const ProbeDeadline& deadline) {
  side.set_drain_timeout(std::min<std::chrono::nanoseconds>(
      kLongestDrain,
      std::max<std::chrono::nanoseconds>(deadline.Remaining(), std::chrono::milliseconds(1))));
}

UcxPeerLink::~UcxPeerLink() {
  if (side_ && side_->connected()) side_->Disconnect(UcxProbeSide::CloseMode::kForce);
}

bool UcxPeerLink::PlaceMemory(const ProbeParams& params, SideMemory* memory, ProbeResult* result) {
  memory->type = params.memory;
  if (params.memory == gpu::MemoryType::kHost) return true;
  std::string error;
  gpu_ = PlaceOnGpu(rails_.front(), &error);
  if (!gpu_) {
    SetFailure(result, "cuda", error);
    return false;
  }
  memory->gpu = gpu_->context;
  return true;
}

bool UcxPeerLink::Open(const Request& request, InitiatorRun& run) {
  rails_ = request.rails;
  std::string reason;
  std::string message;
  const UcxContextSpec spec = UcxSpecFor(rails_, run.params().ucx_transports);
  SideMemory memory;
  if (!PlaceMemory(run.params(), &memory, &run.result())) return false;
  side_ = UcxProbeSide::Create(spec, request.local_buffer_bytes, &reason, &message, memory);
  if (!side_) {
    SetFailure(&run.result(), reason,
               "local UCX side over '" + JoinRailNames(rails_) + "': " + message);
    return false;
  }
  BoundDrainTimeout(*side_, run.deadline());
  peer::ProbeSetup setup = run.Setup(rails_, request.message_bytes, request.max_bytes);
  setup.ucx_worker_address = side_->WorkerAddress();
  if (memory.type != gpu::MemoryType::kHost) setup.memory = gpu::MemoryTypeName(memory.type);
  return run.OpenSession(setup, &session_) &&
         CheckPeerMemory(session_.reply(), memory.type, &run.result()) &&
         ConnectToPeer(session_.reply(), &run.result());
}

bool UcxPeerLink::CheckPeerMemory(const json& reply, gpu::MemoryType wanted, ProbeResult* result) {
  const auto memory = reply.find("memory");
  if (wanted == gpu::MemoryType::kHost) return true;
  if (memory == reply.end() || !memory->is_string()) {
    SetFailure(result, "peer_memory",
               std::string("the peer's responder predates memory types (no 'memory' in its setup "
                           "reply): it would serve host memory, not ") +
                   gpu::MemoryTypeName(wanted) + "; upgrade the peer");
    return false;
  }
  if (memory->get<std::string>() != gpu::MemoryTypeName(wanted)) {
    SetFailure(result, "peer_memory",
               "the peer's responder answered memory '" + memory->get<std::string>() + "' for " +
                   gpu::MemoryTypeName(wanted));
    return false;
  }
  peer_staged_ = reply.value("memory_path", "") == "staged";
  return true;
}

std::string UcxPeerLink::MemoryPath() const {
  if (!side_ || side_->memory_type() != gpu::MemoryType::kCuda) return "host";
  if (side_->staged() || peer_staged_) return "staged";
  const bool cuda_copy = std::any_of(lanes_.begin(), lanes_.end(), [](const TransportLane& lane) {
    return lane.transport == "cuda_copy";
  });
  return cuda_copy ? "cuda_copy" : "gpu_direct";
}

double UcxPeerLink::PeerStagingSeconds(const std::optional<json>& report, UcxOperation operation,
                                       std::uint64_t bytes) const {
  if (!peer_staged_ || !report || bytes == 0) return 0;
  const std::optional<double> rate =
      ReportNumber(*report, operation == UcxOperation::kGet ? "staging_to_host_bytes_per_second"
                                                            : "staging_to_device_bytes_per_second");
  return rate && *rate > 0 ? static_cast<double>(bytes) / *rate : 0;
}

void RecordMemory(const UcxPeerLink& link, ProbeResult* result) {
  if (result->memory == gpu::MemoryType::kHost) return;
  result->memory_path = link.MemoryPath();
  if (!link.gpu()) return;
  result->gpu_pci_bus_id = link.gpu()->pci_bus_id;
  if (!link.gpu()->note.empty() && result->error_reason.empty()) {
    result->error_message = link.gpu()->note;
  }
}

MidTransferLinkSpeed::MidTransferLinkSpeed(std::string pci_bus_id,
                                           std::chrono::nanoseconds transfer)
    : thread_([this, pci_bus_id = std::move(pci_bus_id), half = transfer / 2] {
        std::unique_lock lock(mutex_);
        if (pci_bus_id.empty()) return;
        if (wake_.wait_for(lock, half, [this] { return stopping_; })) return;
        lock.unlock();
        const std::optional<double> speed = GpuLinkSpeed(pci_bus_id);
        lock.lock();
        speed_ = speed;
      }) {}

MidTransferLinkSpeed::~MidTransferLinkSpeed() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<double> MidTransferLinkSpeed::Take() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  return speed_;
}

bool UcxPeerLink::ConnectToPeer(const json& reply, ProbeResult* result) {
  std::string error;
  const std::optional<std::string> address = ReplyBlob(reply, "ucx_worker_address", &error);
  const std::optional<std::string> rkey =
      address ? ReplyBlob(reply, "ucx_rkey", &error) : std::nullopt;
  const std::optional<std::uint64_t> buffer_address = ReportCount(reply, "buffer_address");
  const std::optional<std::uint64_t> buffer_bytes = ReportCount(reply, "buffer_bytes");
  if (!address || !rkey) {
    SetFailure(result, "protocol", error);
    return false;
  }
  if (!buffer_address || !buffer_bytes) {
    SetFailure(result, "protocol", "the peer's setup reply has no buffer_address or buffer_bytes");
    return false;
  }
  std::string reason;
  std::string message;
  if (!side_->Connect(*address, &reason, &message)) {
    SetFailure(result, reason, "connecting to the peer's worker: " + message);
    return false;
  }
  if (!side_->SetRemoteMemory(*rkey, *buffer_address, static_cast<std::size_t>(*buffer_bytes),
                              &reason, &message)) {
    SetFailure(result, reason, "the peer's memory: " + message);
    return false;
  }
  return true;
}

void UcxPeerLink::CaptureLanes() {
  if (!side_ || !side_->connected()) return;
  const auto pairs = side_->LaneTransports();
  if (!pairs.empty()) lanes_ = MapLanes(pairs, rails_);
}

std::optional<json> UcxPeerLink::Finish(json measured, InitiatorRun& run) {
  if (side_ && side_->connected()) {
    const ProbeDeadline& deadline = run.deadline();
    const bool polite =
        run.result().error_reason.empty() && !deadline.Expired() && !deadline.Cancelled();
    if (polite) {
      side_->Disconnect(UcxProbeSide::CloseMode::kFlush,
                        std::min<std::chrono::nanoseconds>(UcxEndpoint::kDefaultCloseLimit,
                                                           deadline.Remaining()));
    } else {
      side_->Disconnect(UcxProbeSide::CloseMode::kForce);
    }
  }
  return run.FinishSession(&session_, std::move(measured));
}

}  // namespace rail::probe::detail
