#include "collectors/striping.h"

#include "collectors/families.h"

namespace rail::collectors::detail {

void AddStriping(const std::vector<probe::StripingEfficiency>& efficiencies,
                 const probe::ResultStore& store, std::vector<prometheus::MetricFamily>& out) {
  auto efficiency =
      Gauge("rail_multirail_striping_efficiency",
            "UCX's striped throughput over all rails divided by the rails' capacity driven in "
            "parallel (ucx_multirail_throughput / multirail_capacity), host memory; only while the "
            "two runs' figures hold (else rail_multirail_striping_efficiency_withheld).");
  auto withheld =
      Gauge("rail_multirail_striping_efficiency_withheld",
            "1 while the striping efficiency is not published, and why: above_capacity (above 1 + "
            "figures.striping_efficiency_tolerance: the capacity is measured again), "
            "awaiting_capacity, runs_apart, figures_withheld.");
  for (const auto& entry : efficiencies) {
    if (entry.value) {
      efficiency.Add({{"peer", entry.peer}}, *entry.value);
    } else {
      withheld.Add({{"peer", entry.peer}, {"reason", entry.withheld_reason}}, 1);
    }
  }
  auto remeasures = Counter(
      "rail_multirail_capacity_remeasures_total",
      "multirail_capacity runs started early because the striping efficiency came out above "
      "range (the capacity had measured low).");
  for (const auto& [key, count] : store.RemeasureCounts()) {
    remeasures.Add({{"peer", key.peer}, {"rail", key.rail}}, static_cast<double>(count));
  }
  for (auto* family : {&efficiency, &withheld, &remeasures}) family->MoveTo(out);
}

}  // namespace rail::collectors::detail
