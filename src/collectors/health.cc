// The health checks' verdicts: rail_check_ok{check,rail,peer} for every verdict and, while a
// check fails, rail_check_info{check,rail,peer,reason} 1; a check that could not judge has
// rail_check_held_back{check,rail,peer,reason} 1 and no rail_check_ok (neither green nor red).
// Changes go to the agent's HealthLog.
#include "collectors/families.h"
#include "collectors/registry.h"
#include "rail/health/checks.h"
#include "rail/health/snapshot_checks.h"

namespace rail::collectors {

namespace {

class HealthCollector final : public Collector {
 public:
  std::string Name() const override { return "health"; }
  std::string Help() const override {
    return "Health checks of the rails and peers: verdicts and reasons";
  }
  // counter_saturated judges the PMA counters, roce_gid the GIDs.
  Reads Needs() const override { return {.port_counters = true, .gids = true}; }

  void Collect(Scrape& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    const auto& results = snapshot.Verdicts().checks;
    if (auto* log = snapshot.sources().health_log) log->Observe(results);

    auto ok = detail::Gauge("rail_check_ok",
                            "1 when the health check passes, 0 when it fails; the reason is on "
                            "rail_check_info. rail or peer is \"\" for checks about neither.");
    auto info =
        detail::Gauge("rail_check_info", "A failing health check and why, for people; value 1.");
    auto held_back = detail::Gauge(
        "rail_check_held_back",
        "A health check that could not judge this time (its evidence was noise or withheld) and "
        "why; it then has no rail_check_ok. Value 1.");
    for (const auto& result : results) {
      detail::Labels labels = {
          {"check", result.check}, {"rail", result.rail}, {"peer", result.peer}};
      if (result.held_back) {
        labels.push_back({"reason", result.reason});
        held_back.Add(std::move(labels), 1);
        continue;
      }
      ok.Add(labels, result.ok ? 1 : 0);
      if (!result.ok) {
        labels.push_back({"reason", result.reason});
        info.Add(std::move(labels), 1);
      }
    }
    ok.MoveTo(out);
    info.MoveTo(out);
    held_back.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeHealthCollector() {
  return std::make_unique<HealthCollector>();
}

}  // namespace rail::collectors
