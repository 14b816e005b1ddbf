// A probe of a UCX kind as the agent runs it: the whole run (control session, UCX, counters)
// happens in the worker; a dead worker fails the run in flight with its reason, while a run that
// finds it restarting waits for it (WorkerPolicy::max_restart_wait) or is skipped.
#include <spdlog/spdlog.h>

#include "probe/worker/wire.h"
#include "rail/probe/counters.h"
#include "rail/probe/own_runs.h"
#include "rail/probe/worker.h"

namespace rail::probe {
namespace {

ProbeResult Failed(const ProbeParams& params, const std::string& reason,
                   const std::string& message) {
  ProbeResult result;
  result.kind = params.kind;
  result.peer = params.peer;
  result.rails = RailNames(params.rails);
  result.error_reason = reason;
  result.error_message = message;
  result.finished_at = std::chrono::system_clock::now();
  return result;
}

class RemoteProbe final : public Probe {
 public:
  RemoteProbe(ProbeWorker& worker, ProbeKind kind) : worker_(worker), kind_(kind) {}
  ProbeKind kind() const override { return kind_; }

  ProbeResult Run(const ProbeParams& params, const ProbeContext& context) override {
    // The worker sees only its own runs; this process also runs the TCP kinds, so its registry
    // is the one that knows every run of the agent.
    const OwnRuns::Registration own_run(OwnRuns::Process(), RailNames(params.rails));
    const auto timeout = params.timeout + WorkerPolicy{}.call_grace;
    const auto when_no_worker = context.wait_for_worker ? ProbeWorker::WhenNoWorker::kAwaitRestart
                                                        : ProbeWorker::WhenNoWorker::kSkip;
    ProbeWorker::Reply reply =
        worker_.Call({{"type", "run"}, {"params", worker::ToJson(params)}}, timeout, context.cancel,
                     {{"type", "cancel"}}, when_no_worker);
    if (!reply.ok) return Failed(params, reply.reason, reply.error);
    std::string error;
    auto result = worker::ResultFromJson(reply.message.value("result", nlohmann::json()), &error);
    if (!result) return Failed(params, "protocol", "the probe worker's result: " + error);
    result->bytes_on_other_rails = OtherRailsTransmitBytes(*result, own_run.OverlappingRails());
    return std::move(*result);
  }

 private:
  ProbeWorker& worker_;
  ProbeKind kind_;
};

}  // namespace

ProbeMaker WorkerProbeMaker(ProbeWorker& worker) {
  return [&worker](ProbeKind kind) -> std::unique_ptr<Probe> {
    if (!NeedsUcx(kind)) return MakeTcpProbe(kind);
    return std::make_unique<RemoteProbe>(worker, kind);
  };
}

}  // namespace rail::probe
