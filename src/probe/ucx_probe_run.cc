#include "ucx_probe_run.h"

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

UcxContextSpec UcxSpecFor(const std::vector<ProbeRail>& rails, const std::string& transports) {
  UcxContextSpec spec;
  for (const ProbeRail& rail : rails) spec.net_devices.push_back(rail.ucx_device);
  spec.transports = transports.empty() ? kUcxDefaultTransports : transports;
  const unsigned count = static_cast<unsigned>(std::max<std::size_t>(rails.size(), 1));
  spec.max_rndv_rails = count;
  if (count > 1) spec.extra_config["MAX_EAGER_RAILS"] = std::to_string(count);
  return spec;
}

std::string JoinRailNames(const std::vector<ProbeRail>& rails) {
  std::string joined;
  for (const ProbeRail& rail : rails) {
    if (!joined.empty()) joined += ',';
    joined += rail.name;
  }
  return joined;
}

bool IsRdmaTransport(std::string_view transport) {
  for (std::string_view family : {"rc", "dc", "ud", "gga", "ugni"}) {
    if (transport == family) return true;
    if (transport.size() > family.size() && transport.starts_with(family) &&
        transport[family.size()] == '_') {
      return true;
    }
  }
  return false;
}

std::vector<TransportLane> MapLanes(const std::vector<std::pair<std::string, std::string>>& pairs,
                                    const std::vector<ProbeRail>& rails) {
  std::vector<TransportLane> lanes;
  // Not a structured binding: clang 14 (the fuzz build's) cannot capture one in a lambda.
  for (const auto& pair : pairs) {
    const std::string& device = pair.second;
    TransportLane lane{pair.first, device, ""};
    auto owner = std::find_if(rails.begin(), rails.end(),
                              [&](const ProbeRail& rail) { return rail.ucx_device == device; });
    if (owner == rails.end()) {
      owner = std::find_if(rails.begin(), rails.end(), [&](const ProbeRail& rail) {
        return !rail.netdev.empty() && rail.netdev == device;
      });
    }
    if (owner != rails.end()) lane.rail = owner->name;
    lanes.push_back(std::move(lane));
  }
  return lanes;
}

void AddFallbackRails(const std::vector<TransportLane>& lanes, const std::vector<ProbeRail>& rails,
                      ProbeResult* result) {
  for (const ProbeRail& rail : rails) {
    if (!rail.expect_rdma || Contains(result->fallback_rails, rail.name)) continue;
    const bool fell_back = std::any_of(lanes.begin(), lanes.end(), [&](const TransportLane& lane) {
      return (lane.rail == rail.name || lane.rail.empty()) && !IsRdmaTransport(lane.transport);
    });
    if (fell_back) result->fallback_rails.push_back(rail.name);
  }
}

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
    wake_.wait_until(lock, std::min(deadline_.deadline(), Clock::now() + kCancelCheckInterval));
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

bool UcxPeerLink::Open(const Request& request, const ProbeParams& params,
                       const ProbeContext& context, const ProbeDeadline& deadline,
                       ProbeResult* result) {
  rails_ = request.rails;
  std::string reason;
  std::string message;
  const UcxContextSpec spec = UcxSpecFor(rails_, params.ucx_transports);
  side_ = UcxProbeSide::Create(spec, request.local_buffer_bytes, &reason, &message);
  if (!side_) {
    SetFailure(result, reason, "local UCX side over '" + JoinRailNames(rails_) + "': " + message);
    return false;
  }
  BoundDrainTimeout(*side_, deadline);

  peer::ProbeSetup setup;
  setup.kind = ProbeKindName(request.kind);
  setup.rail = JoinRailNames(rails_);
  setup.message_sizes_bytes = {request.message_bytes};
  setup.duration_seconds = std::chrono::duration<double>(params.duration).count();
  setup.max_bytes = request.max_bytes;
  setup.ucx_worker_address = side_->WorkerAddress();
  if (!session_.Open(params, context, setup, deadline, result)) return false;
  session_open_ = true;

  const json& reply = session_.reply();
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

std::optional<json> UcxPeerLink::Finish(json measured, const ProbeDeadline& deadline,
                                        ProbeResult* result) {
  if (side_ && side_->connected()) {
    const bool polite =
        result->error_reason.empty() && !deadline.Expired() && !deadline.Cancelled();
    if (polite) {
      side_->Disconnect(UcxProbeSide::CloseMode::kFlush,
                        std::min<std::chrono::nanoseconds>(UcxEndpoint::kDefaultCloseLimit,
                                                           deadline.Remaining()));
    } else {
      side_->Disconnect(UcxProbeSide::CloseMode::kForce);
    }
  }
  if (!session_open_) return std::nullopt;
  // probe_done goes out even after a failure, so that the responder stops serving at once.
  if (!result->error_reason.empty()) measured["error"] = result->error_reason;
  json report;
  if (!session_.Finish(measured, deadline, &report, result)) return std::nullopt;
  return report;
}

void FinishResult(ProbeResult* result) {
  if (!result->error_reason.empty()) {
    SetFailure(result, result->error_reason, result->error_message);
    return;
  }
  result->success = true;
  result->finished_at = std::chrono::system_clock::now();
}

}  // namespace rail::probe::detail
