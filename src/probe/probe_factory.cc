#include <algorithm>

#include "rail/probe/handler_factory.h"
#include "rail/probe/probe.h"
#include "rail/probe/tcp.h"

namespace rail::probe {

std::unique_ptr<Probe> MakeProbe(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::kTcpThroughput:
      return std::make_unique<TcpThroughputProbe>();
    case ProbeKind::kTcpRtt:
      return std::make_unique<TcpRttProbe>();
    case ProbeKind::kUcxThroughput:
    case ProbeKind::kUcxRtt:
    case ProbeKind::kMultirailCapacity:
    case ProbeKind::kUcxMultirailThroughput:
      return nullptr;
  }
  return nullptr;
}

std::unique_ptr<peer::ProbeSessionHandler> MakeProbeHandler(const std::string& kind,
                                                            const ProbeRail& rail) {
  const std::optional<ProbeKind> parsed = ParseProbeKind(kind);
  if (!parsed) return nullptr;
  switch (*parsed) {
    case ProbeKind::kTcpThroughput:
      return std::make_unique<TcpSinkHandler>(rail);
    case ProbeKind::kTcpRtt:
      return std::make_unique<TcpEchoHandler>(rail);
    case ProbeKind::kUcxThroughput:
    case ProbeKind::kUcxRtt:
    case ProbeKind::kMultirailCapacity:
    case ProbeKind::kUcxMultirailThroughput:
      return nullptr;
  }
  return nullptr;
}

peer::ProbeHandlerFactory MakeProbeHandlerFactory(std::vector<ProbeRail> local_rails) {
  return [rails = std::move(local_rails)](
             const std::string& kind,
             const std::string& rail_name) -> std::unique_ptr<peer::ProbeSessionHandler> {
    const auto rail = std::find_if(rails.begin(), rails.end(), [&](const ProbeRail& candidate) {
      return candidate.name == rail_name;
    });
    if (rail == rails.end()) return nullptr;
    return MakeProbeHandler(kind, *rail);
  };
}

}  // namespace rail::probe
