#include "probe_run.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <random>

#include "rail/peer/session_messages.h"

namespace rail::probe::detail {

using nlohmann::json;

std::chrono::milliseconds ProbeDeadline::Remaining() const {
  return std::chrono::ceil<std::chrono::milliseconds>(deadline_.Remaining());
}

std::string NewRunId() {
  // Unique among the runs a responder sees from this host's address at once: several agents
  // may share it (the lab runs three), and each draws its own.
  static thread_local std::mt19937_64 random{std::random_device{}()};
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(random()));
  return text;
}

ProbeResult NewResult(const ProbeParams& params) {
  ProbeResult result;
  result.kind = params.kind;
  result.peer = params.peer;
  result.rails = RailNames(params.rails);
  result.memory = params.memory;
  // What moves GPU memory is known only once the sides are set up (the kinds fill it in).
  if (params.memory == gpu::MemoryType::kCuda) result.memory_path = "unknown";
  return result;
}

void SetFailure(ProbeResult* result, const std::string& reason, const std::string& message) {
  result->success = false;
  if (result->error_reason.empty()) {
    result->error_reason = reason.empty() ? "internal" : reason;
    result->error_message = message;
  }
  result->finished_at = std::chrono::system_clock::now();
}

CounterCheck::CounterCheck(const ProbeContext& context, const ProbeParams& params)
    : reader_(context.counters), own_run_(OwnRuns::Process(), RailNames(params.rails)) {
  if (reader_ == nullptr) return;
  const auto add = [this](const ProbeRail& rail) {
    const bool known = std::any_of(rails_.begin(), rails_.end(),
                                   [&](const ProbeRail& seen) { return seen.name == rail.name; });
    if (!known) rails_.push_back(rail);
  };
  for (const ProbeRail& rail : params.rails) {
    add(rail);
    probed_.push_back(rail.name);
  }
  for (const ProbeRail& rail : context.all_rails) add(rail);
  before_ = reader_->Snapshot(rails_);
  // The probed rails come first in rails_.
  for (const ProbeRail& rail : rails_) {
    if (std::find(probed_.begin(), probed_.end(), rail.name) == probed_.end()) break;
    fabric_before_.push_back(reader_->fabric().Read(rail));
  }
}

void CounterCheck::Finish(ProbeResult* result) const {
  if (reader_ == nullptr) return;
  const RailCounterSnapshot after = reader_->Snapshot(rails_);
  for (std::size_t i = 0; i < fabric_before_.size(); ++i) {
    result->fabric.push_back(
        FabricEvidence(rails_[i].name, fabric_before_[i], reader_->fabric().Read(rails_[i])));
  }
  result->counters = CounterDeltas(before_, after, probed_, nullptr);
  // In the order of rails_ (the host's rails), not of the snapshot's map.
  const std::vector<RailCounterDelta> others = OtherRailDeltas(before_, after, probed_);
  for (const ProbeRail& rail : rails_) {
    const auto delta = std::find_if(others.begin(), others.end(), [&](const RailCounterDelta& one) {
      return one.rail == rail.name;
    });
    if (delta != others.end()) result->counters.push_back(*delta);
  }
  result->bytes_on_other_rails = OtherRailsTransmitBytes(*result, own_run_.OverlappingRails());
}

bool PeerProbeSession::Open(const ProbeParams& params, const ProbeContext& context,
                            const peer::ProbeSetup& setup, const ProbeDeadline& deadline,
                            ProbeResult* result) {
  if (!context.connect) {
    SetFailure(result, "internal", "no peer connector configured");
    return false;
  }
  std::string reason;
  std::string message;
  client_ = context.connect(params.peer, deadline.Remaining(), &reason, &message);
  if (client_ == nullptr) {
    SetFailure(result, reason.empty() ? "connect" : reason, message);
    return false;
  }
  result->peer_agent_version = client_->peer_versions().agent_version;
  result->peer_ucx_version = client_->peer_versions().ucx_version;
  result->peer_name = client_->peer_name();
  result->peer_rail_mtus = client_->peer_rail_mtus();
  if (deadline.Cancelled()) {
    SetFailure(result, "cancelled", "probe cancelled");
    return false;
  }
  peer::NetError error;
  std::optional<json> answer = client_->Request(ToJson(setup), deadline.deadline(), &error);
  if (!answer) {
    SetFailure(result, error.reason, "probe setup: " + error.message);
    // The first failure wins: the hint belongs to the result only when busy or the peer's rate
    // limit is its reason.
    if ((IsBusy(*result) || result->error_reason == kRateReason) && error.retry_after) {
      result->retry_after = *error.retry_after;
    }
    return false;
  }
  peer::ProbeSetupReply setup_reply;
  std::string parse_error;
  if (!FromJson(*answer, &setup_reply, &parse_error)) {
    client_->SendError("protocol", "expected probe_setup_reply");
    SetFailure(result, "protocol", parse_error);
    return false;
  }
  reply_ = std::move(setup_reply.setup);
  opened_ = true;
  return true;
}

std::string PeerProbeSession::DataHost() const {
  const auto address = reply_.find("tcp_address");
  if (address != reply_.end() && address->is_string() && !address->get<std::string>().empty()) {
    return address->get<std::string>();
  }
  return client_ != nullptr ? client_->peer_host() : "";
}

std::optional<std::uint16_t> PeerProbeSession::DataPort() const {
  const std::optional<std::uint64_t> port = ReportCount(reply_, "tcp_port");
  if (!port || *port == 0 || *port > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(*port);
}

bool PeerProbeSession::Finish(const json& measured, const ProbeDeadline& deadline, json* report,
                              ProbeResult* result) {
  if (!opened_) return false;
  peer::NetError error;
  std::optional<json> answer =
      client_->Request(ToJson(peer::ProbeDone{measured}), deadline.deadline(), &error);
  if (!answer) {
    if (error.reason == kPeerShutdownReason) {
      // The peer stopped under this probe and said so: what our side saw of it (an echo stream
      // closed, an endpoint timed out) follows from that.
      result->error_reason.clear();
    }
    SetFailure(result, error.reason, "probe report: " + error.message);
    return false;
  }
  peer::ProbeReport parsed;
  std::string parse_error;
  if (!FromJson(*answer, &parsed, &parse_error)) {
    SetFailure(result, "protocol", parse_error);
    return false;
  }
  *report = std::move(parsed.report);
  return true;
}

InitiatorRun::InitiatorRun(const ProbeParams& params, const ProbeContext& context,
                           ProbeResult* result)
    : params_(params),
      context_(context),
      result_(result),
      cpu_start_(ThreadCpuSeconds()),
      deadline_(params.timeout, context.cancel),
      counters_(context, params),
      run_id_(NewRunId()) {}

peer::ProbeSetup InitiatorRun::Setup(const std::vector<ProbeRail>& rails,
                                     std::uint64_t message_bytes, std::uint64_t max_bytes) const {
  peer::ProbeSetup setup;
  setup.kind = ProbeKindName(result_->kind);
  setup.rail = JoinRailNames(rails);
  setup.message_sizes_bytes = {message_bytes};
  setup.duration_seconds = std::chrono::duration<double>(params_.duration).count();
  setup.max_bytes = max_bytes;
  setup.run_id = run_id_;
  return setup;
}

bool InitiatorRun::OpenSession(const peer::ProbeSetup& setup, PeerProbeSession* session) {
  return session->Open(params_, context_, setup, deadline_, result_);
}

std::optional<json> InitiatorRun::FinishSession(PeerProbeSession* session, json measured) {
  if (!session->opened()) return std::nullopt;
  if (!result_->error_reason.empty()) measured["error"] = result_->error_reason;
  json report;
  if (!session->Finish(measured, deadline_, &report, result_)) return std::nullopt;
  if (report.value("worker_crashed", false)) {
    // The peer's worker died under this probe: whatever our side saw of it (a reset endpoint,
    // a timeout) follows from that.
    result_->success = false;
    result_->error_reason = "peer_worker_crashed";
    result_->error_message = "the peer's probe worker died during the probe: " +
                             report.value("error", std::string("no detail"));
  }
  return report;
}

void InitiatorRun::CheckCounters() {
  if (counters_checked_) return;
  counters_checked_ = true;
  counters_.Finish(result_);
}

void InitiatorRun::Finish() {
  if (ended_before_transfer_) return;
  CheckCounters();
  result_->local_cpu_seconds += ThreadCpuSeconds() - cpu_start_;
  FinishResult(result_);
}

ProbeResult RunInitiator(const InitiatorKind& kind, const ProbeParams& params,
                         const ProbeContext& context,
                         const std::function<void(InitiatorRun&)>& body) {
  ProbeResult result = NewResult(params);
  result.kind = kind.kind;
  try {
    if (kind.invalid) {
      SetFailure(&result, "invalid_argument", *kind.invalid);
      return result;
    }
    ProbeParams run_params = params;
    run_params.kind = kind.kind;
    if (kind.first_rail_only) {
      run_params.rails.resize(1);  // valid parameters name at least one rail
      result.rails = {run_params.rails.front().name};
    }
    InitiatorRun run(run_params, context, &result);
    body(run);
    run.Finish();
  } catch (const std::exception& error) {
    SetFailure(&result, "internal", error.what());
  }
  return result;
}

void FinishResult(ProbeResult* result) {
  if (!result->error_reason.empty()) {
    SetFailure(result, result->error_reason, result->error_message);
    return;
  }
  result->success = true;
  result->finished_at = std::chrono::system_clock::now();
}

std::optional<double> PeerCpuSeconds(const std::optional<json>& report) {
  if (!report) return std::nullopt;
  return ReportNumber(*report, "cpu_seconds");
}

std::string JoinRailNames(const std::vector<ProbeRail>& rails) {
  std::string joined;
  for (const ProbeRail& rail : rails) {
    if (!joined.empty()) joined += ',';
    joined += rail.name;
  }
  return joined;
}

std::optional<double> ReportNumber(const json& report, const char* field) {
  const auto value = report.find(field);
  if (value == report.end() || !value->is_number()) return std::nullopt;
  const double number = value->get<double>();
  if (!std::isfinite(number) || number < 0) return std::nullopt;
  return number;
}

std::optional<std::uint64_t> ReportCount(const json& report, const char* field) {
  const auto value = report.find(field);
  if (value == report.end() || !value->is_number_integer()) return std::nullopt;
  if (!value->is_number_unsigned() && value->get<std::int64_t>() < 0) return std::nullopt;
  return value->get<std::uint64_t>();
}

}  // namespace rail::probe::detail
