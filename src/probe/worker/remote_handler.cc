// The responder half of a UCX kind as the agent serves it: a proxy whose every step runs in the
// worker. When the worker dies the probe's peer learns it from the setup refusal or the report
// ("peer_worker_crashed"), not only from a broken UCX endpoint.
#include <spdlog/spdlog.h>

#include "probe/worker/wire.h"
#include "rail/peer/messages.h"
#include "rail/probe/worker.h"

namespace rail::probe {
namespace {

// How long a step of the responder's half may take in the worker: Setup creates a UCP context,
// Report reads counters; neither waits for the network.
constexpr std::chrono::milliseconds kStepTimeout{15000};

class WorkerHandler final : public peer::ProbeSessionHandler {
 public:
  WorkerHandler(ProbeWorker& worker, ProbeKind kind, std::vector<ProbeRail> rails)
      : worker_(worker), kind_(kind), rails_(std::move(rails)), id_(worker.NewHandlerId()) {}

  ~WorkerHandler() override {
    if (generation_ != 0) worker_.Send({{"type", "close"}, {"handler", id_}}, generation_);
  }

  bool Setup(const peer::ProbeSetup& request, nlohmann::json* reply_fields, std::string* reason,
             std::string* message) override {
    generation_ = worker_.Generation();
    auto reply = worker_.Call({{"type", "setup"},
                               {"handler", id_},
                               {"kind", ProbeKindName(kind_)},
                               {"rails", worker::ToJson(rails_)},
                               {"request", peer::ToJson(request)}},
                              kStepTimeout);
    if (!reply.ok) {
      // The initiator reads reasons as the peer's: its worker, not the initiator's own.
      *reason = reply.reason.rfind("worker_", 0) == 0 ? "peer_" + reply.reason : reply.reason;
      *message = reply.error;
      if (reply.reason.rfind("worker_", 0) == 0) lost_ = reply.error;
      return false;
    }
    *reply_fields = reply.message.value("fields", nlohmann::json::object());
    return true;
  }

  void Serve(const std::atomic<bool>& stop) override {
    // No deadline of its own: the responder sets `stop` at the probe's deadline, and a worker
    // that then does not answer within kStepTimeout is hung.
    auto reply = worker_.Call({{"type", "serve"}, {"handler", id_}}, ServeTimeout(), &stop,
                              {{"type", "stop"}, {"handler", id_}});
    if (!reply.ok) lost_ = reply.reason + ": " + reply.error;
  }

  nlohmann::json Report() override {
    if (lost_.empty() && worker_.Generation() == generation_) {
      auto reply = worker_.Call({{"type", "report"}, {"handler", id_}}, kStepTimeout);
      if (reply.ok) return reply.message.value("report", nlohmann::json::object());
      lost_ = reply.reason + ": " + reply.error;
    }
    if (lost_.empty()) lost_ = "the probe worker was restarted during the probe";
    spdlog::warn("responder: {} probe lost its worker: {}", ProbeKindName(kind_), lost_);
    return {{"worker_crashed", true}, {"error", lost_}};
  }

 private:
  // Serve lasts as long as the responder lets the probe run; its own bound is the largest probe
  // the limits admit (peer::Limits) plus the step timeout.
  static std::chrono::milliseconds ServeTimeout() { return std::chrono::hours(1) + kStepTimeout; }

  ProbeWorker& worker_;
  ProbeKind kind_;
  std::vector<ProbeRail> rails_;
  std::uint64_t id_;
  std::uint64_t generation_ = 0;
  std::string lost_;  // why the worker's half is gone; "" while it is there
};

}  // namespace

std::unique_ptr<peer::ProbeSessionHandler> MakeWorkerHandler(ProbeWorker& worker, ProbeKind kind,
                                                             const std::vector<ProbeRail>& rails) {
  return std::make_unique<WorkerHandler>(worker, kind, rails);
}

}  // namespace rail::probe
