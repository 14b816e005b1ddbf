// The responder that answers other agents' probes: connections, sessions, refusals by reason,
// and the peers that probed us with their versions.
#include "rail/peer/responder.h"

#include "collectors/families.h"
#include "collectors/registry.h"
#include "rail/health/checks.h"

namespace rail::collectors {
namespace {

class ResponderCollector final : public Collector {
 public:
  std::string Name() const override { return "responder"; }
  std::string Help() const override { return "The responder answering other agents' probes"; }

  void Collect(Scrape& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    if (!snapshot.sources().responder_stats) return;
    const peer::ResponderStats stats = snapshot.sources().responder_stats();
    detail::Counter("rail_responder_connections_total",
                    "Control connections accepted by the responder, refused ones included.")
        .Add({}, static_cast<double>(stats.connections_total))
        .MoveTo(out);
    detail::Counter("rail_responder_sessions_total", "Peer sessions that completed a handshake.")
        .Add({}, static_cast<double>(stats.sessions_total))
        .MoveTo(out);
    detail::Gauge("rail_responder_active_sessions", "Peer sessions open now.")
        .Add({}, static_cast<double>(stats.active_sessions))
        .MoveTo(out);
    detail::Counter("rail_responder_probes_total", "Probes served through to their report.")
        .Add({}, static_cast<double>(stats.probes_total))
        .MoveTo(out);
    detail::Counter("rail_responder_bulk_transfers_total",
                    "Bulk transfers (throughput probes) the responder served, admitted one run at "
                    "a time per host or per rail (bulk_concurrency).")
        .Add({}, static_cast<double>(stats.bulk_transfers_total))
        .MoveTo(out);
    detail::Counter("rail_responder_bulk_overlaps_total",
                    "Bulk transfers that overlapped another run's bulk transfer on this host (or "
                    "rail) anyway; 0 unless the bulk gate let two runs through.")
        .Add({}, static_cast<double>(stats.bulk_overlaps_total))
        .MoveTo(out);
    auto errors = detail::Counter(
        "rail_responder_errors_total",
        "Peers refused or sessions failed, by reason (auth, replay, limit, rate, malformed, "
        "oversized, version, timeout, busy, budget, ...).");
    for (const auto& [reason, count] : stats.errors_by_reason) {
      errors.Add({{"reason", reason}}, static_cast<double>(count));
    }
    errors.MoveTo(out);
    const auto& ours = snapshot.sources().health;
    auto peers = detail::Gauge("rail_responder_peer_info",
                               "A peer that probed this agent, with its versions; value 1.");
    auto mismatch =
        detail::Gauge("rail_responder_peer_version_mismatch",
                      "1 when a peer that probed this agent runs another agent or UCX version.");
    for (const auto& [address, info] : stats.peers) {
      peers.Add({{"peer", address},
                 {"agent_version", info.versions.agent_version},
                 {"ucx_version", info.versions.ucx_version},
                 {"authenticated", info.authenticated ? "true" : "false"}},
                1);
      const bool differ =
          !health::VersionDifferences(info.versions.agent_version, info.versions.ucx_version,
                                      ours.own_agent_version, ours.own_ucx_version)
               .empty();
      mismatch.Add({{"peer", address}}, differ ? 1 : 0);
    }
    peers.MoveTo(out);
    mismatch.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeResponderCollector() {
  return std::make_unique<ResponderCollector>();
}

}  // namespace rail::collectors
