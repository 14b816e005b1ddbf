// The health checks' verdicts: rail_check_ok{check,rail,peer} for every verdict and, while a
// check fails, rail_check_info{check,rail,peer,reason} 1. Changes go to the agent's HealthLog.
#include "collectors/families.h"
#include "collectors/registry.h"
#include "rail/build_info.h"
#include "rail/health/checks.h"
#include "rail/health/snapshot_checks.h"
#include "rail/probe/result_store.h"

namespace rail {

health::SnapshotVerdicts health::EvaluateSnapshot(ScrapeSnapshot& snapshot) {
  const auto& sources = snapshot.sources();
  static const AgentConfig kNoConfig;
  SnapshotVerdicts verdicts;
  if (sources.interface_addresses) verdicts.addresses = sources.interface_addresses();
  if (sources.results) verdicts.series = sources.results->Snapshot();

  HealthInputs inputs;
  inputs.rails = &snapshot.Rails();
  inputs.devices = &snapshot.Devices();
  inputs.net_devices = &snapshot.NetDevices();
  inputs.bonds = &snapshot.Bonds();
  inputs.addresses = &verdicts.addresses;
  inputs.probe_series = &verdicts.series;
  inputs.config = sources.config ? sources.config : &kNoConfig;
  inputs.own_agent_version = GetBuildInfo().version;
  inputs.own_ucx_version = GetBuildInfo().ucx_version;
  if (const auto* store = sources.results) {
    inputs.is_current = [store](const probe::SeriesState& state) {
      return store->IsCurrent(state);
    };
  }
  verdicts.checks = EvaluateChecks(inputs);
  return verdicts;
}

namespace {

class HealthCollector final : public Collector {
 public:
  std::string Name() const override { return "health"; }

  void Collect(ScrapeSnapshot& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    const auto results = health::EvaluateSnapshot(snapshot).checks;
    if (auto* log = snapshot.sources().health_log) log->Observe(results);

    auto ok = detail::Gauge("rail_check_ok",
                            "1 when the health check passes, 0 when it fails; the reason is on "
                            "rail_check_info. rail or peer is \"\" for checks about neither.");
    auto info =
        detail::Gauge("rail_check_info", "A failing health check and why, for people; value 1.");
    for (const auto& result : results) {
      detail::Labels labels = {
          {"check", result.check}, {"rail", result.rail}, {"peer", result.peer}};
      ok.Add(labels, result.ok ? 1 : 0);
      if (!result.ok) {
        labels.push_back({"reason", result.reason});
        info.Add(std::move(labels), 1);
      }
    }
    ok.MoveTo(out);
    info.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeHealthCollector() {
  return std::make_unique<HealthCollector>();
}

}  // namespace rail
