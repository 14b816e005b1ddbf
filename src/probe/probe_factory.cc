#include <algorithm>
#include <string_view>

#include "rail/probe/handler_factory.h"
#include "rail/probe/probe.h"
#include "rail/probe/tcp.h"

namespace rail::probe {

namespace {

// "a,b" -> {"a", "b"}; empty items are kept, so that "a,,b" or "a," names no rail and is refused.
std::vector<std::string> SplitRailList(std::string_view list) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    names.emplace_back(list.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return names;
    start = comma + 1;
  }
}

}  // namespace

bool NeedsUcx(ProbeKind kind) {
  return kind != ProbeKind::kTcpThroughput && kind != ProbeKind::kTcpRtt;
}

std::unique_ptr<Probe> MakeTcpProbe(ProbeKind kind) {
  if (kind == ProbeKind::kTcpThroughput) return std::make_unique<TcpThroughputProbe>();
  if (kind == ProbeKind::kTcpRtt) return std::make_unique<TcpRttProbe>();
  return nullptr;
}

bool HandlerServes(ProbeKind kind, std::size_t rails) {
  // Only ucx_multirail_throughput opens one context over several rails; multirail_capacity
  // sets up one session per rail, each a single-rail probe.
  return rails == 1 || (rails > 1 && kind == ProbeKind::kUcxMultirailThroughput);
}

std::unique_ptr<peer::ProbeSessionHandler> MakeTcpHandler(ProbeKind kind,
                                                          const std::vector<ProbeRail>& rails) {
  if (rails.size() != 1) return nullptr;
  if (kind == ProbeKind::kTcpThroughput) return std::make_unique<TcpSinkHandler>(rails.front());
  if (kind == ProbeKind::kTcpRtt) return std::make_unique<TcpEchoHandler>(rails.front());
  return nullptr;
}

peer::ProbeHandlerFactory MakeProbeHandlerFactory(std::vector<ProbeRail> local_rails,
                                                  HandlerMaker ucx_handlers) {
  return [rails = std::move(local_rails), ucx_handlers = std::move(ucx_handlers)](
             const std::string& kind,
             const std::string& rail_list) -> std::unique_ptr<peer::ProbeSessionHandler> {
    std::vector<ProbeRail> selected;
    for (const std::string& name : SplitRailList(rail_list)) {
      const auto rail = std::find_if(rails.begin(), rails.end(), [&](const ProbeRail& candidate) {
        return candidate.name == name;
      });
      if (rail == rails.end()) return nullptr;
      const bool repeated = std::any_of(selected.begin(), selected.end(),
                                        [&](const ProbeRail& seen) { return seen.name == name; });
      if (repeated) return nullptr;
      selected.push_back(*rail);
    }
    const std::optional<ProbeKind> parsed = ParseProbeKind(kind);
    if (!parsed || !HandlerServes(*parsed, selected.size())) return nullptr;
    if (!NeedsUcx(*parsed)) return MakeTcpHandler(*parsed, selected);
    return ucx_handlers ? ucx_handlers(*parsed, selected) : nullptr;
  };
}

}  // namespace rail::probe
