#include <time.h>

#include <algorithm>
#include <string_view>

#include "probe/ucx/handler.h"
#include "rail/probe/handler_factory.h"
#include "rail/probe/probe.h"
#include "rail/probe/tcp.h"
#include "rail/probe/ucx.h"

namespace rail::probe {

double ThreadCpuSeconds() {
  timespec now{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

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

std::unique_ptr<Probe> MakeProbe(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::kTcpThroughput:
      return std::make_unique<TcpThroughputProbe>();
    case ProbeKind::kTcpRtt:
      return std::make_unique<TcpRttProbe>();
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

std::unique_ptr<peer::ProbeSessionHandler> MakeProbeHandler(const std::string& kind,
                                                            const ProbeRail& rail) {
  return MakeProbeHandler(kind, std::vector<ProbeRail>{rail});
}

std::unique_ptr<peer::ProbeSessionHandler> MakeProbeHandler(const std::string& kind,
                                                            const std::vector<ProbeRail>& rails) {
  const std::optional<ProbeKind> parsed = ParseProbeKind(kind);
  if (!parsed || rails.empty()) return nullptr;
  // Only ucx_multirail_throughput opens one context over several rails; multirail_capacity
  // sets up one session per rail, each a single-rail probe.
  if (rails.size() > 1 && *parsed != ProbeKind::kUcxMultirailThroughput) return nullptr;
  switch (*parsed) {
    case ProbeKind::kTcpThroughput:
      return std::make_unique<TcpSinkHandler>(rails.front());
    case ProbeKind::kTcpRtt:
      return std::make_unique<TcpEchoHandler>(rails.front());
    case ProbeKind::kUcxThroughput:
    case ProbeKind::kUcxRtt:
    case ProbeKind::kMultirailCapacity:
    case ProbeKind::kUcxMultirailThroughput:
      return std::make_unique<UcxHandler>(*parsed, rails);
  }
  return nullptr;
}

peer::ProbeHandlerFactory MakeProbeHandlerFactory(std::vector<ProbeRail> local_rails) {
  return [rails = std::move(local_rails)](
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
    return MakeProbeHandler(kind, selected);
  };
}

}  // namespace rail::probe
