// The striping efficiency of a peer: UCX's own striping over every rail (ucx_multirail_throughput)
// divided by every rail driven at once (multirail_capacity), computed once here for the runner
// (which re-measures a capacity that came out low), the collector and the multirail_striping
// check. The capacity is itself a measurement with noise: an efficiency above 1 + tolerance says
// the capacity is low, not that UCX beat the rails, and is withheld (figures.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rail/probe/figures.h"
#include "rail/probe/result_store.h"

namespace rail::probe {

// Why an efficiency is not published (rail_multirail_striping_efficiency_withheld's `reason`).
inline constexpr const char* kAboveCapacity = "above_capacity";
inline constexpr const char* kAwaitingCapacity = "awaiting_capacity";
inline constexpr const char* kRunsApart = "runs_apart";
inline constexpr const char* kFiguresWithheld = "figures_withheld";

struct StripingEfficiency {
  std::string peer;
  SeriesKey striped;   // the ucx_multirail_throughput series
  SeriesKey capacity;  // the multirail_capacity series it is divided by
  double ratio = 0;    // striped over capacity throughput, published or not
  // The published efficiency: the ratio when every invariant holds; nullopt when withheld.
  std::optional<double> value;
  std::string withheld_reason;  // a token above when withheld
  std::string message;          // why, for people
};

// One efficiency per peer with a current, successful ucx_multirail_throughput series of host
// memory and a current, successful multirail_capacity series over the same rails and memory
// and the same message size (of the striped sizes with such a pair, the largest). `is_current`:
// empty, every series is current.
std::vector<StripingEfficiency> StripingEfficiencies(
    const std::vector<SeriesState>& series,
    const std::function<bool(const SeriesState&)>& is_current, const FigureLimits& limits);

}  // namespace rail::probe
