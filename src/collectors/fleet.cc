// The fleet: discovery by source, this agent's place among the targets, the plan of the current
// epoch, the cardinality budget, and per-rail summaries without a peer label (the long-lived view
// of each rail while the plan's peers rotate).
#include <set>
#include <tuple>

#include "collectors/families.h"
#include "collectors/registry.h"
#include "rail/probe/rail_summary.h"

namespace rail::collectors {
namespace {

using detail::Counter;
using detail::Gauge;

double Seconds(base::WallTime time) {
  return std::chrono::duration<double>(time.time_since_epoch()).count();
}

void AddDiscovery(const fleet::FleetStatus& status, std::vector<prometheus::MetricFamily>& out) {
  auto targets = Gauge("rail_fleet_discovery_targets",
                       "Targets a discovery source contributes now (its last good list).");
  auto refreshes =
      Counter("rail_fleet_discovery_refreshes_total", "Refreshes of a discovery source.");
  auto errors = Counter("rail_fleet_discovery_errors_total",
                        "Failed refreshes of a discovery source; it kept its last good list.");
  auto success = Gauge("rail_fleet_discovery_last_success_timestamp_seconds",
                       "When a discovery source last refreshed successfully (Unix time).");
  auto fetch_seconds =
      Gauge("rail_fleet_discovery_last_fetch_seconds",
            "How long a discovery source's last fetch took, failed ones included.");
  auto fetch_cpu = Gauge("rail_fleet_discovery_last_fetch_cpu_seconds",
                         "CPU the agent spent in a discovery source's last fetch (parsing, TLS).");
  for (const auto& source : status.sources) {
    const detail::Labels labels = {{"source", source.name}};
    targets.Add(labels, static_cast<double>(source.targets));
    refreshes.Add(labels, static_cast<double>(source.refreshes));
    errors.Add(labels, static_cast<double>(source.failures));
    if (source.last_success) success.Add(labels, Seconds(*source.last_success));
    if (source.refreshes > 0) {
      fetch_seconds.Add(labels, source.last_fetch_seconds);
      fetch_cpu.Add(labels, source.last_fetch_cpu_seconds);
    }
  }
  for (auto* family : {&targets, &refreshes, &errors, &success, &fetch_seconds, &fetch_cpu}) {
    family->MoveTo(out);
  }
}

void AddPlan(const fleet::FleetStatus& status, std::size_t probe_series,
             std::vector<prometheus::MetricFamily>& out) {
  Gauge("rail_fleet_peers", "Targets discovered, merged over every source, this agent included.")
      .Add({}, static_cast<double>(status.peers))
      .MoveTo(out);
  Gauge("rail_fleet_self_found",
        "1 when this agent is one of the discovered targets (fleet.self when the targets list it, "
        "or found by its addresses and responder port); 0: it probes no fleet peer and no peer "
        "probes it.")
      .Add({}, status.self.empty() ? 0 : 1)
      .MoveTo(out);
  Gauge("rail_fleet_plan_epoch", "The plan's current epoch: whole fleet.epoch lengths since 1970.")
      .Add({}, static_cast<double>(status.epoch))
      .MoveTo(out);
  auto peers = Gauge("rail_fleet_plan_peers", "Peers the current plan probes over a rail.");
  for (const auto& [rail, count] : status.rails) {
    peers.Add({{"rail", rail}}, static_cast<double>(count));
  }
  peers.MoveTo(out);
  auto empty =
      Gauge("rail_fleet_plan_empty",
            "1 when the plan gives this agent no peer although the fleet has more than one "
            "target, by reason (self_not_found, no_local_rails, no_peer_on_rails, "
            "duplicates_only); 0 for the other reasons, and for all while it has peers.");
  for (const auto reason : fleet::kPlanEmptyReasons) {
    empty.Add({{"reason", std::string(reason)}}, status.plan_empty == reason ? 1 : 0);
  }
  empty.MoveTo(out);
  Counter("rail_fleet_plan_changes_total",
          "Plan recomputations that changed this agent's pairs (peers joining or leaving next to "
          "it, a new epoch).")
      .Add({}, static_cast<double>(status.plan_changes))
      .MoveTo(out);
  auto names = Gauge("rail_fleet_peer_info",
                     "The name a planned peer gave in its welcome (responder.name, else its host "
                     "name) beside its discovery target; value 1.");
  for (const auto& [peer, name] : status.peer_names) names.Add({{"peer", peer}, {"name", name}}, 1);
  names.MoveTo(out);
  Gauge("rail_fleet_duplicate_targets",
        "Planned targets not probed because another planned target answered with the same name "
        "(one agent listed twice), or because they are this agent.")
      .Add({}, static_cast<double>(status.duplicates.size()))
      .MoveTo(out);
  Gauge("rail_fleet_probe_series", "Per-peer probe series this agent exports now.")
      .Add({}, static_cast<double>(probe_series))
      .MoveTo(out);
  Gauge("rail_fleet_probe_series_budget",
        "fleet.max_probe_series: the per-peer probe series this agent may export.")
      .Add({}, static_cast<double>(status.max_probe_series))
      .MoveTo(out);
}

void AddRailSummaries(const fleet::FleetStatus& status, const probe::ResultStore& store,
                      std::vector<prometheus::MetricFamily>& out) {
  std::set<std::tuple<std::string, std::string>> planned;  // peer, rail
  for (const auto& pair : status.pairs) planned.emplace(pair.peer, pair.rail);
  const auto summaries = probe::SummarizeRails(store.Snapshot(), [&](const auto& state) {
    return planned.contains({state.key.peer, state.key.rail}) && store.IsCurrent(state);
  });
  auto throughput = Gauge("rail_fleet_rail_throughput_median_bytes_per_second",
                          "Median over the rail's planned peers of their latest throughput "
                          "(largest message size); bytes per second.");
  auto rtt = Gauge("rail_fleet_rail_rtt_worst_seconds",
                   "The largest p99 round-trip time among the rail's planned peers' latest runs.");
  auto peers = Gauge("rail_fleet_rail_peers",
                     "The rail's planned peers by their latest result: ok or failed.");
  for (const auto& summary : summaries) {
    if (summary.median_throughput_bytes_per_second) {
      throughput.Add({{"kind", summary.kind}, {"rail", summary.rail}, {"memory", summary.memory}},
                     *summary.median_throughput_bytes_per_second);
    }
    if (summary.worst_rtt_p99_seconds) {
      rtt.Add({{"kind", summary.kind}, {"rail", summary.rail}}, *summary.worst_rtt_p99_seconds);
    }
    const detail::Labels labels = {{"kind", summary.kind}, {"rail", summary.rail}};
    auto with_state = [&labels](const char* state) {
      auto copy = labels;
      copy.push_back({"state", state});
      return copy;
    };
    peers.Add(with_state("ok"), static_cast<double>(summary.peers_ok));
    peers.Add(with_state("failed"), static_cast<double>(summary.peers_failed));
  }
  throughput.MoveTo(out);
  rtt.MoveTo(out);
  peers.MoveTo(out);
}

class FleetCollector final : public Collector {
 public:
  std::string Name() const override { return "fleet"; }
  std::string Help() const override {
    return "Peer discovery, the probe plan, the series budget and per-rail summaries";
  }

  void Collect(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) override {
    if (!scrape.sources().fleet) return;
    const auto status = scrape.sources().fleet();
    if (!status) return;
    const auto* store = scrape.results();
    AddDiscovery(*status, out);
    AddPlan(*status, store != nullptr ? store->SeriesCount() : 0, out);
    if (store != nullptr) AddRailSummaries(*status, *store, out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeFleetCollector() {
  return std::make_unique<FleetCollector>();
}

}  // namespace rail::collectors
