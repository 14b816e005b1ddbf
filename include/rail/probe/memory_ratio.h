// Each rail's GPU-memory throughput against its host-memory throughput: the figure that says
// whether VRAM transfers get what the rail can do (GPUDirect RDMA) or a fraction of it (staged
// through host memory). Computed here once; the probe collector publishes it and the
// gpu_memory_throughput check judges it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rail/gpu/memory.h"
#include "rail/probe/figures.h"
#include "rail/probe/result_store.h"

namespace rail::probe {

struct MemoryThroughputRatio {
  std::string kind;  // "ucx_throughput", ...
  std::string rail;  // as in the series key ("rail0", or "rail0+rail1" for multi-rail kinds)
  std::string peer;
  std::uint64_t message_size_bytes = 0;
  gpu::MemoryType memory = gpu::MemoryType::kCuda;  // cuda or cuda_host
  std::string memory_path;                          // how the GPU-memory run moved its bytes
  double memory_bytes_per_second = 0;
  double host_bytes_per_second = 0;
  double ratio = 0;  // memory / host
};

// For every successful, current GPU-memory series, the ratio to the successful, current
// host-memory series of the same kind, rail, peer and message size; none without that pair, nor
// when either run's figures were withheld or the two finished further apart than
// limits.ratio_max_age. `is_current` empty: every series is current.
std::vector<MemoryThroughputRatio> MemoryThroughputRatios(
    const std::vector<SeriesState>& series,
    const std::function<bool(const SeriesState&)>& is_current, const FigureLimits& limits);

}  // namespace rail::probe
