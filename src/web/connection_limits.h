// The HTTP endpoint's connection ceiling against the process's descriptor limit. The event-driven
// listener (http_listener.h) holds a connection for a descriptor and a few KiB, no thread; but
// each one is a descriptor (RLIMIT_NOFILE), shared with the sysfs file cache and the probes. A
// ceiling that does not fit is lowered at start, never left to fail at the thousandth connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rail::web::detail {

// The sysfs file cache takes at most half of RLIMIT_NOFILE (sysfs/file_cache.h); of the other
// half this many stay for the responder, probe sockets, logs and libraries.
inline constexpr std::uint64_t kReservedFiles = 128;
// Never below a scrape and a few stragglers.
inline constexpr int kMinConnections = 4;

struct ProcessLimits {
  // RLIMIT_NOFILE's soft limit after main() raised it to the hard one; nullopt: unlimited.
  std::optional<std::uint64_t> open_files;
};

struct ConnectionCeiling {
  int connections = 0;
  // Empty when `wanted` fits; else the limit that lowered it, in words, for the log.
  std::string lowered_by;
};

// The largest ceiling up to `wanted` that `limits` admit, and why it is lower when it is.
ConnectionCeiling FitConnections(int wanted, const ProcessLimits& limits);

// This process's limits, read now.
ProcessLimits ReadProcessLimits();

}  // namespace rail::web::detail
