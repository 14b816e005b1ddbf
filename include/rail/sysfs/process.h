// The agent's own process figures from procfs (<procfs>/self/stat, <procfs>/self/status,
// <procfs>/self/fd, <procfs>/self/limits), for the standard process_* metrics.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "rail/sysfs/filesystem.h"

namespace rail::sysfs {

struct ProcessStats {
  std::optional<double> cpu_seconds;                 // self/stat utime + stime, in clock ticks
  std::optional<double> start_time_seconds;          // self/stat starttime + stat btime (epoch)
  std::optional<std::uint64_t> resident_bytes;       // self/status VmRSS
  std::optional<std::uint64_t> peak_resident_bytes;  // self/status VmHWM
  std::optional<std::uint64_t> virtual_bytes;        // self/status VmSize
  std::optional<std::uint64_t> open_fds;             // entries of self/fd
  std::optional<std::uint64_t> max_fds;              // self/limits "Max open files" soft limit
};

// `proc` is rooted at the real /proc: the agent reports itself, not the tree it inspects.
ProcessStats ReadProcessStats(const Filesystem& proc);

// Fields 14 (utime) and 15 (stime) and 22 (starttime) of a stat line, whose second field (comm)
// may contain spaces and parentheses.
struct StatTimes {
  std::uint64_t utime_ticks = 0;
  std::uint64_t stime_ticks = 0;
  std::uint64_t start_ticks = 0;
};
std::optional<StatTimes> ParseStatLine(std::string_view line);

// "VmRSS:	   1234 kB" lines of self/status, in bytes.
std::optional<std::uint64_t> ParseStatusKilobytes(std::string_view status, std::string_view key);

}  // namespace rail::sysfs
