// A probe of a UCX kind as the agent runs it: the whole run (control session, UCX, counters)
// happens in the worker; a dead worker fails the run with its reason.
#include <spdlog/spdlog.h>

#include "probe/worker/wire.h"
#include "rail/probe/worker.h"

namespace rail::probe {
namespace {

ProbeResult Failed(const ProbeParams& params, const std::string& reason,
                   const std::string& message) {
  ProbeResult result;
  result.kind = params.kind;
  result.peer = params.peer;
  for (const auto& rail : params.rails) result.rails.push_back(rail.name);
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
    const auto timeout = params.timeout + WorkerPolicy{}.call_grace;
    ProbeWorker::Reply reply = worker_.Call({{"type", "run"}, {"params", worker::ToJson(params)}},
                                            timeout, context.cancel, {{"type", "cancel"}});
    if (!reply.ok) return Failed(params, reply.reason, reply.error);
    std::string error;
    auto result = worker::ResultFromJson(reply.message.value("result", nlohmann::json()), &error);
    if (!result) return Failed(params, "protocol", "the probe worker's result: " + error);
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
