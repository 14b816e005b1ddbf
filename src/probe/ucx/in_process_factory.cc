// Every probe kind in this process (in_process.h): the worker's and the unit tests' factory.
#include "probe/ucx/handler.h"
#include "rail/probe/handler_factory.h"
#include "rail/probe/in_process.h"
#include "rail/probe/ucx.h"

namespace rail::probe {

std::unique_ptr<Probe> MakeProbe(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::kTcpThroughput:
    case ProbeKind::kTcpRtt:
      return MakeTcpProbe(kind);
    case ProbeKind::kUcxThroughput:
      return std::make_unique<UcxThroughputProbe>();
    case ProbeKind::kUcxRtt:
      return std::make_unique<UcxRttProbe>();
    case ProbeKind::kMultirailCapacity:
      return std::make_unique<MultirailCapacityProbe>();
    case ProbeKind::kUcxMultirailThroughput:
      return std::make_unique<UcxMultirailThroughputProbe>();
  }
  return nullptr;
}

std::unique_ptr<peer::ProbeSessionHandler> MakeUcxHandler(ProbeKind kind,
                                                          const std::vector<ProbeRail>& rails) {
  if (!NeedsUcx(kind) || !HandlerServes(kind, rails.size())) return nullptr;
  return std::make_unique<UcxHandler>(kind, rails);
}

peer::ProbeHandlerFactory MakeProbeHandlerFactory(std::vector<ProbeRail> local_rails) {
  return MakeProbeHandlerFactory(std::move(local_rails), MakeUcxHandler);
}

}  // namespace rail::probe
