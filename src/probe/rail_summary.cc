#include "rail/probe/rail_summary.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace rail::probe {
namespace {

using SummaryKey = std::tuple<std::string, std::string, std::string>;  // kind, rail, memory

// Each peer's series with the largest message size, by summary.
std::map<SummaryKey, std::map<std::string, const SeriesState*>> LargestPerPeer(
    const std::vector<SeriesState>& series,
    const std::function<bool(const SeriesState&)>& include) {
  std::map<SummaryKey, std::map<std::string, const SeriesState*>> grouped;
  for (const auto& state : series) {
    const auto kind = ParseProbeKind(state.key.kind);
    if (!kind || IsMultiRail(*kind) || !include(state)) continue;
    auto& slot = grouped[{state.key.kind, state.key.rail, state.key.memory}][state.key.peer];
    if (slot == nullptr || state.key.message_size_bytes > slot->key.message_size_bytes) {
      slot = &state;
    }
  }
  return grouped;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const auto middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace

std::vector<RailSummary> SummarizeRails(const std::vector<SeriesState>& series,
                                        const std::function<bool(const SeriesState&)>& include) {
  std::vector<RailSummary> summaries;
  for (const auto& [key, peers] : LargestPerPeer(series, include)) {
    RailSummary summary;
    std::tie(summary.kind, summary.rail, summary.memory) = key;
    const bool bulk = IsBulk(*ParseProbeKind(summary.kind));
    std::vector<double> throughputs;
    for (const auto& [peer, state] : peers) {
      const auto& last = state->last;
      if (!last.success) {
        ++summary.peers_failed;
        continue;
      }
      ++summary.peers_ok;
      if (bulk) throughputs.push_back(last.throughput_bytes_per_second);
      if (!bulk && last.rtt) {
        summary.worst_rtt_p99_seconds =
            std::max(summary.worst_rtt_p99_seconds.value_or(0.0), last.rtt->p99);
      }
    }
    if (!throughputs.empty()) summary.median_throughput_bytes_per_second = Median(throughputs);
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

}  // namespace rail::probe
