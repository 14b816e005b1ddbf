// gpu_memory_throughput: a rail whose GPU-memory probe got less than
// Thresholds::gpu_memory_min_host_ratio of what host memory got over the same rail, peer and
// message size (probe::MemoryThroughputRatios, computed once there): VRAM transfers staged
// through host memory instead of GPUDirect RDMA. One verdict per rail and peer; the reason names
// every pair below the threshold.
#include <spdlog/fmt/fmt.h>

#include <map>
#include <utility>

#include "health/check_helpers.h"
#include "rail/probe/memory_ratio.h"

namespace rail::health::detail {

void CheckGpuMemoryThroughput(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> below;  // rail, peer
  for (const auto& ratio :
       probe::MemoryThroughputRatios(Series(inputs), inputs.is_current, inputs.figures)) {
    auto& reasons = below[{ratio.rail, ratio.peer}];
    if (ratio.ratio >= inputs.thresholds.gpu_memory_min_host_ratio) continue;
    reasons.push_back(fmt::format(
        "{} with {} memory ({} B messages, moved by {}) got {}, {:.2f} of host memory's {} "
        "(minimum {:g})",
        ratio.kind, gpu::MemoryTypeName(ratio.memory), ratio.message_size_bytes, ratio.memory_path,
        Gbits(ratio.memory_bytes_per_second), ratio.ratio, Gbits(ratio.host_bytes_per_second),
        inputs.thresholds.gpu_memory_min_host_ratio));
  }
  for (const auto& [key, reasons] : below) {
    out.push_back(Verdict("gpu_memory_throughput", key.first, key.second, Join(reasons, "; ")));
  }
}

}  // namespace rail::health::detail
