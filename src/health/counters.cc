// counter_saturated: a PMA counter pegged at its maximum (2^width - 1) no longer counts, so every
// rate derived from it reads zero. Judged on the counter the infiniband collector exports
// (BestPortCounter: counters_ext/ supersedes a narrow counters/ file). A port without PMA counters
// gets no verdict.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"

namespace rail::health::detail {

void CheckCounters(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto& rail : Rails(inputs)) {
    const auto* port = FindPort(inputs, rail);
    // No PMA (rxe, siw: no counters/ nor counters_ext/): nothing to judge, and a pass would cite
    // files that do not exist.
    if (port == nullptr || (port->counters.empty() && port->counters_ext.empty())) continue;
    std::vector<std::string> pegged;
    for (const auto& [file, counter] : port->counters) {
      const auto* best = sysfs::BestPortCounter(*port, file);
      if (best != nullptr && best->saturated) {
        pegged.push_back(fmt::format("{} ({} bit)", file, best->width_bits));
      }
    }
    out.push_back(Verdict(
        "counter_saturated", rail.name, "",
        pegged.empty() ? std::string()
                       : fmt::format("{} port {} counters pegged at their maximum (ports/{}/"
                                     "counters): {}; reset them (perfquery -R) to count again",
                                     rail.device, rail.port, rail.port, Join(pegged))));
  }
}

}  // namespace rail::health::detail
