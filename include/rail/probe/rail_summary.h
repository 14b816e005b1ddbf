// Per-rail figures without a peer label: the view of a rail that outlives any one plan. A fleet
// agent's per-peer series come and go as the plan rotates; these stay, one per kind and rail.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rail/probe/result_store.h"

namespace rail::probe {

struct RailSummary {
  std::string kind;
  std::string rail;
  std::string memory;
  std::size_t peers_ok = 0;      // peers whose latest run succeeded
  std::size_t peers_failed = 0;  // peers whose latest run failed
  // Bulk kinds: the median over the succeeding peers of their throughput at their largest
  // message size.
  std::optional<double> median_throughput_bytes_per_second;
  // Round-trip kinds: the largest p99 of the peers' latest successful runs.
  std::optional<double> worst_rtt_p99_seconds;
};

// Summarises the single-rail series `include` accepts (the caller passes the current ones of
// peers in the plan), by kind, rail and memory type. Each peer counts once per summary: by its
// series with the largest message size.
std::vector<RailSummary> SummarizeRails(const std::vector<SeriesState>& series,
                                        const std::function<bool(const SeriesState&)>& include);

}  // namespace rail::probe
