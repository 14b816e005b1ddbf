#include "connection_limits.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

namespace rail::web::detail {
namespace {

std::uint64_t Less(std::uint64_t value, std::uint64_t minus) {
  return value > minus ? value - minus : 0;
}

// The connections `open_files` descriptors leave room for: the sysfs cache's half, the reserve
// and the accept queue come first.
std::uint64_t ConnectionsForFiles(std::uint64_t open_files) {
  return Less(Less(open_files / 2, kReservedFiles), kConnectionQueue);
}

std::optional<std::uint64_t> ReadNumber(const std::string& path) {
  std::ifstream file(path);
  std::string text;
  if (!(file >> text) || text.empty() ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;  // absent, or "max"
  }
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// `path` (as in /proc/self/cgroup) and each of its ancestors below `base`, deepest first. A path
// outside this cgroup namespace ("/../..") leaves only the namespace's root.
std::vector<std::string> CgroupDirectories(const std::string& base, const std::string& path) {
  std::vector<std::string> components;
  std::stringstream stream(path);
  for (std::string component; std::getline(stream, component, '/');) {
    if (component == "..") return {base};
    if (!component.empty()) components.push_back(component);
  }
  std::vector<std::string> directories;
  for (std::size_t depth = components.size() + 1; depth-- > 0;) {
    std::string directory = base;
    for (std::size_t i = 0; i < depth; ++i) directory += "/" + components[i];
    directories.push_back(directory);
  }
  return directories;
}

// The pids hierarchy's base directory for one /proc/self/cgroup line, "" when it has none.
std::string PidsBase(const std::string& controllers, const std::string& id,
                     const std::string& cgroup_root) {
  if (id == "0" && controllers.empty()) return cgroup_root;
  std::stringstream list(controllers);
  for (std::string controller; std::getline(list, controller, ',');) {
    if (controller == "pids") return cgroup_root + "/pids";
  }
  return "";
}

}  // namespace

ConnectionCeiling FitConnections(int wanted, const ProcessLimits& limits) {
  ConnectionCeiling ceiling{wanted, ""};
  const auto lower = [&](std::uint64_t room, const std::string& why) {
    const std::uint64_t floor = static_cast<std::uint64_t>(std::min(wanted, kMinConnections));
    const std::uint64_t fitted = std::max(room, floor);
    if (fitted >= static_cast<std::uint64_t>(ceiling.connections)) return;
    ceiling.connections = static_cast<int>(fitted);
    ceiling.lowered_by = why;
  };
  if (limits.open_files) {
    lower(ConnectionsForFiles(*limits.open_files),
          "RLIMIT_NOFILE " + std::to_string(*limits.open_files) +
              " (half for the sysfs file cache, " + std::to_string(kReservedFiles) + " reserved, " +
              std::to_string(kConnectionQueue) + " for the accept queue)");
  }
  if (limits.free_tasks) {
    lower(Less(*limits.free_tasks, kReservedTasks),
          "the cgroup's pids.max (" + std::to_string(*limits.free_tasks) + " more tasks allowed, " +
              std::to_string(kReservedTasks) + " reserved; one thread per connection)");
  }
  return ceiling;
}

std::optional<std::uint64_t> FreeTasks(std::string_view proc_self_cgroup,
                                       const std::string& cgroup_root) {
  std::optional<std::uint64_t> tightest;
  std::stringstream lines{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(lines, line);) {
    const std::size_t first = line.find(':');
    const std::size_t second = line.find(':', first == std::string::npos ? first : first + 1);
    if (second == std::string::npos) continue;
    const std::string base =
        PidsBase(line.substr(first + 1, second - first - 1), line.substr(0, first), cgroup_root);
    if (base.empty()) continue;
    for (const std::string& directory : CgroupDirectories(base, line.substr(second + 1))) {
      const auto max = ReadNumber(directory + "/pids.max");
      if (!max) continue;
      const std::uint64_t free = Less(*max, ReadNumber(directory + "/pids.current").value_or(0));
      tightest = std::min(tightest.value_or(free), free);
    }
  }
  return tightest;
}

ProcessLimits ReadProcessLimits() {
  ProcessLimits limits;
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    limits.open_files = files.rlim_cur;
  }
  std::ifstream cgroup("/proc/self/cgroup");
  std::stringstream text;
  text << cgroup.rdbuf();
  limits.free_tasks = FreeTasks(text.str(), "/sys/fs/cgroup");
  return limits;
}

}  // namespace rail::web::detail
