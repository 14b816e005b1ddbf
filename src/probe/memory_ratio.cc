#include "rail/probe/memory_ratio.h"

#include <map>
#include <tuple>

namespace rail::probe {
namespace {

// What makes a GPU-memory series and a host-memory series the same measurement but for the
// memory: kind, rail, peer, message size (and stream count, for completeness of the key).
using Pairing = std::tuple<std::string, std::string, std::string, std::uint64_t, unsigned>;

Pairing PairingOf(const SeriesKey& key) {
  return {key.kind, key.rail, key.peer, key.message_size_bytes, key.streams};
}

bool Usable(const SeriesState& state, const std::function<bool(const SeriesState&)>& is_current) {
  return state.last.success && state.last.withheld.empty() &&
         state.last.throughput_bytes_per_second > 0 && (!is_current || is_current(state));
}

}  // namespace

std::vector<MemoryThroughputRatio> MemoryThroughputRatios(
    const std::vector<SeriesState>& series,
    const std::function<bool(const SeriesState&)>& is_current, const FigureLimits& limits) {
  std::map<Pairing, const SeriesState*> host;
  for (const SeriesState& state : series) {
    if (state.key.memory == gpu::MemoryTypeName(gpu::MemoryType::kHost) &&
        Usable(state, is_current)) {
      host[PairingOf(state.key)] = &state;
    }
  }
  std::vector<MemoryThroughputRatio> ratios;
  for (const SeriesState& state : series) {
    const std::optional<gpu::MemoryType> memory = gpu::ParseMemoryType(state.key.memory);
    if (!memory || *memory == gpu::MemoryType::kHost || !Usable(state, is_current)) continue;
    const auto reference = host.find(PairingOf(state.key));
    if (reference == host.end() || !RunsCloseEnough(state.last, reference->second->last, limits)) {
      continue;
    }
    MemoryThroughputRatio ratio;
    ratio.kind = state.key.kind;
    ratio.rail = state.key.rail;
    ratio.peer = state.key.peer;
    ratio.message_size_bytes = state.key.message_size_bytes;
    ratio.memory = *memory;
    ratio.memory_path = state.last.memory_path;
    ratio.memory_bytes_per_second = state.last.throughput_bytes_per_second;
    ratio.host_bytes_per_second = reference->second->last.throughput_bytes_per_second;
    ratio.ratio = ratio.memory_bytes_per_second / ratio.host_bytes_per_second;
    ratios.push_back(std::move(ratio));
  }
  return ratios;
}

}  // namespace rail::probe
