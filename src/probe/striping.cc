#include "rail/probe/striping.h"

#include <spdlog/fmt/fmt.h>

#include <map>

namespace rail::probe {
namespace {

bool Usable(const SeriesState& state, const std::function<bool(const SeriesState&)>& is_current) {
  return state.last.success && (!is_current || is_current(state));
}

// The capacity series `striped` is divided by, or nullptr.
const SeriesState* CapacityFor(const SeriesState& striped, const std::vector<SeriesState>& series,
                               const std::function<bool(const SeriesState&)>& is_current) {
  const SeriesState* best = nullptr;
  for (const SeriesState& state : series) {
    const SeriesKey& key = state.key;
    if (key.kind != ProbeKindName(ProbeKind::kMultirailCapacity) || key.peer != striped.key.peer ||
        key.rail != striped.key.rail || key.memory != striped.key.memory ||
        !Usable(state, is_current)) {
      continue;
    }
    const bool same_size = key.message_size_bytes == striped.key.message_size_bytes;
    if (best == nullptr || same_size ||
        (best->key.message_size_bytes != striped.key.message_size_bytes &&
         key.message_size_bytes > best->key.message_size_bytes)) {
      best = &state;
    }
  }
  return best;
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
  // Per peer, the striped series of the largest message size.
  std::map<std::string, const SeriesState*> striped_by_peer;
  for (const SeriesState& state : series) {
    if (state.key.kind != ProbeKindName(ProbeKind::kUcxMultirailThroughput) ||
        state.key.memory != "host" || !Usable(state, is_current)) {
      continue;
    }
    auto& chosen = striped_by_peer[state.key.peer];
    if (chosen == nullptr || state.key.message_size_bytes > chosen->key.message_size_bytes) {
      chosen = &state;
    }
  }
  std::vector<StripingEfficiency> out;
  for (const auto& [peer, striped] : striped_by_peer) {
    const SeriesState* capacity = CapacityFor(*striped, series, is_current);
    if (capacity == nullptr || capacity->last.throughput_bytes_per_second <= 0) continue;
    StripingEfficiency efficiency;
    efficiency.peer = peer;
    efficiency.striped = striped->key;
    efficiency.capacity = capacity->key;
    efficiency.ratio =
        striped->last.throughput_bytes_per_second / capacity->last.throughput_bytes_per_second;
    efficiency.noisy = IsNoisy(striped->last, limits) || IsNoisy(capacity->last, limits);
    Judge(*striped, *capacity, limits, &efficiency);
    out.push_back(std::move(efficiency));
  }
  return out;
}

}  // namespace rail::probe
