#include "connection_limits.h"

#include <sys/resource.h>

#include <algorithm>

namespace rail::web::detail {

ConnectionCeiling FitConnections(int wanted, const ProcessLimits& limits) {
  ConnectionCeiling ceiling{wanted, ""};
  if (!limits.open_files) return ceiling;
  const std::uint64_t half = *limits.open_files / 2;
  const std::uint64_t room = half > kReservedFiles ? half - kReservedFiles : 0;
  const std::uint64_t fitted =
      std::max(room, static_cast<std::uint64_t>(std::min(wanted, kMinConnections)));
  if (fitted >= static_cast<std::uint64_t>(wanted)) return ceiling;
  ceiling.connections = static_cast<int>(fitted);
  ceiling.lowered_by = "RLIMIT_NOFILE " + std::to_string(*limits.open_files) +
                       " (half for the sysfs file cache, " + std::to_string(kReservedFiles) +
                       " reserved)";
  return ceiling;
}

ProcessLimits ReadProcessLimits() {
  ProcessLimits limits;
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    limits.open_files = files.rlim_cur;
  }
  return limits;
}

}  // namespace rail::web::detail
