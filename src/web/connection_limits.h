// The HTTP endpoint's connection ceiling against the process's limits. civetweb 1.15 gives every
// connection a worker thread of its own until the connection closes, and a connection waiting
// for a free thread delays whatever request it carries (a scrape behind idle clients waited
// 20 s). So the endpoint starts one worker per connection it may hold (--web.max-connections),
// and each costs a descriptor (RLIMIT_NOFILE) and a task (the cgroup's pids.max: systemd's
// TasksMax, a pod's pid limit). A ceiling that does not fit is lowered, never left to fail at
// the thousandth connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rail::web::detail {

// Sockets civetweb's accept thread may hold while every worker is busy; the kernel's listen
// backlog holds the rest without a descriptor each.
inline constexpr int kConnectionQueue = 64;
// The sysfs file cache takes at most half of RLIMIT_NOFILE (sysfs/file_cache.h); of the other
// half this many stay for the responder, probe sockets, logs and libraries.
inline constexpr std::uint64_t kReservedFiles = 128;
// Tasks left for the agent's own threads started after the web server (scheduler, probes,
// responder sessions, UCX's progress threads) and a little for what shares the cgroup.
inline constexpr std::uint64_t kReservedTasks = 64;
// Never below what the endpoint had before the ceiling existed: a scrape and a few stragglers.
inline constexpr int kMinConnections = 4;

struct ProcessLimits {
  // RLIMIT_NOFILE's soft limit after main() raised it to the hard one; nullopt: unlimited.
  std::optional<std::uint64_t> open_files;
  // Tasks the tightest cgroup pids.max on the way to the root still admits (max - current);
  // nullopt: no pids limit anywhere.
  std::optional<std::uint64_t> free_tasks;
};

struct ConnectionCeiling {
  int connections = 0;
  // Empty when `wanted` fits; else the limit that lowered it, in words, for the log.
  std::string lowered_by;
};

// The largest ceiling up to `wanted` that `limits` admit, and why it is lower when it is.
ConnectionCeiling FitConnections(int wanted, const ProcessLimits& limits);

// How many tasks the cgroups of /proc/self/cgroup (`proc_self_cgroup`, its text) still admit,
// looking for pids.max and pids.current under `cgroup_root` (/sys/fs/cgroup): the cgroup v2
// hierarchy ("0::/path") or, on a v1 host, the pids controller's ("N:pids:/path" under
// `cgroup_root`/pids). Every ancestor counts; nullopt when none has a limit.
std::optional<std::uint64_t> FreeTasks(std::string_view proc_self_cgroup,
                                       const std::string& cgroup_root);

// This process's limits, read now.
ProcessLimits ReadProcessLimits();

}  // namespace rail::web::detail
