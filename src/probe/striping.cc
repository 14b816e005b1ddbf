#include "rail/probe/striping.h"

#include <spdlog/fmt/fmt.h>

#include <map>

namespace rail::probe {
namespace {

bool Usable(const SeriesState& state, const std::function<bool(const SeriesState&)>& is_current) {
  return state.last.success && (!is_current || is_current(state));
}

// The capacity series `striped` is divided by, or nullptr: the same peer, rails, memory and
// message size. Runs of other sizes measure other things (a capacity of 16 KiB messages against
// striping of 256 KiB ones says nothing of the striping).
const SeriesState* CapacityFor(const SeriesState& striped, const std::vector<SeriesState>& series,
                               const std::function<bool(const SeriesState&)>& is_current) {
  for (const SeriesState& state : series) {
    SeriesKey key = state.key;
    key.kind = striped.key.kind;
    if (state.key.kind == ProbeKindName(ProbeKind::kMultirailCapacity) && key == striped.key &&
        Usable(state, is_current) && state.last.throughput_bytes_per_second > 0) {
      return &state;
    }
  }
  return nullptr;
}

// Publishes the ratio, or says why it is withheld: the first invariant the pair breaks.
void Judge(const SeriesState& striped, const SeriesState& capacity, const FigureLimits& limits,
           StripingEfficiency* efficiency) {
  const auto withhold = [&](const char* reason, std::string message) {
    efficiency->withheld_reason = reason;
    efficiency->message = std::move(message);
  };
  if (!striped.last.withheld.empty() || !capacity.last.withheld.empty()) {
    withhold(kFiguresWithheld, "the figures of the multi-rail or the capacity run were withheld");
  } else if (capacity.remeasure_requested) {
    withhold(kAwaitingCapacity,
             "an earlier efficiency was above range; the capacity is being measured again");
  } else if (!RunsCloseEnough(striped.last, capacity.last, limits)) {
    withhold(kRunsApart,
             fmt::format(
                 "the two runs finished more than {} s apart (figures.ratio_max_age)",
                 std::chrono::duration_cast<std::chrono::seconds>(limits.ratio_max_age).count()));
  } else if (efficiency->ratio > 1 + limits.striping_efficiency_tolerance) {
    withhold(kAboveCapacity,
             fmt::format("UCX's striping reached {:.2f} times the rails driven at once, above 1 + "
                         "{:g} (figures.striping_efficiency_tolerance): the capacity measured "
                         "low, and is measured again",
                         efficiency->ratio, limits.striping_efficiency_tolerance));
  } else {
    efficiency->value = efficiency->ratio;
  }
}

}  // namespace

std::vector<StripingEfficiency> StripingEfficiencies(
    const std::vector<SeriesState>& series,
    const std::function<bool(const SeriesState&)>& is_current, const FigureLimits& limits) {
  // Per peer, the striped series of the largest message size that has its capacity.
  std::map<std::string, std::pair<const SeriesState*, const SeriesState*>> pairs;
  for (const SeriesState& state : series) {
    if (state.key.kind != ProbeKindName(ProbeKind::kUcxMultirailThroughput) ||
        state.key.memory != "host" || !Usable(state, is_current)) {
      continue;
    }
    const SeriesState* capacity = CapacityFor(state, series, is_current);
    if (capacity == nullptr) continue;
    auto& chosen = pairs[state.key.peer];
    if (chosen.first == nullptr ||
        state.key.message_size_bytes > chosen.first->key.message_size_bytes) {
      chosen = {&state, capacity};
    }
  }
  std::vector<StripingEfficiency> out;
  for (const auto& [peer, pair] : pairs) {
    const auto& [striped, capacity] = pair;
    StripingEfficiency efficiency;
    efficiency.peer = peer;
    efficiency.striped = striped->key;
    efficiency.capacity = capacity->key;
    efficiency.ratio =
        striped->last.throughput_bytes_per_second / capacity->last.throughput_bytes_per_second;
    Judge(*striped, *capacity, limits, &efficiency);
    out.push_back(std::move(efficiency));
  }
  return out;
}

}  // namespace rail::probe
