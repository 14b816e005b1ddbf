#include "rail/sysfs/process.h"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <string>
#include <vector>

namespace rail::sysfs {
namespace {

std::optional<std::uint64_t> ToUnsigned(std::string_view text) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || ptr == text.data()) return std::nullopt;
  return value;
}

std::vector<std::string_view> SplitBlanks(std::string_view text) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n') ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  return fields;
}

std::optional<std::uint64_t> BootTimeSeconds(const Filesystem& proc) {
  std::string stat;
  if (proc.ReadFile("stat", &stat) != 0) return std::nullopt;
  const std::string_view key = "\nbtime ";
  const auto at = stat.find(key);
  if (at == std::string::npos) return std::nullopt;
  const auto rest = std::string_view(stat).substr(at + key.size());
  return ToUnsigned(rest.substr(0, rest.find('\n')));
}

std::optional<std::uint64_t> SoftOpenFileLimit(const Filesystem& proc) {
  std::string limits;
  if (proc.ReadFile("self/limits", &limits) != 0) return std::nullopt;
  const auto at = limits.find("Max open files");
  if (at == std::string::npos) return std::nullopt;
  const auto line = std::string_view(limits).substr(at + 14);
  const auto fields = SplitBlanks(line.substr(0, line.find('\n')));
  if (fields.empty()) return std::nullopt;
  return ToUnsigned(fields.front());
}

// Linux 6.2 and later give the number of open descriptors as the size of /proc/self/fd, which
// spares listing thousands of entries (the agent keeps its counter files open); older kernels
// report 0 there, and then the directory is listed.
std::optional<std::uint64_t> CountOpenFds(const Filesystem& proc) {
  if (const auto* rooted = dynamic_cast<const RootedFilesystem*>(&proc)) {
    struct stat info {};
    if (stat((rooted->root() + "/self/fd").c_str(), &info) == 0 && info.st_size > 0) {
      return static_cast<std::uint64_t>(info.st_size);
    }
  }
  std::vector<std::string> fds;
  if (proc.ListDirectory("self/fd", &fds) != 0) return std::nullopt;
  return fds.size();
}

}  // namespace

std::optional<StatTimes> ParseStatLine(std::string_view line) {
  // comm is wrapped in parentheses and may itself contain ") ": the last one ends it.
  const auto comm_end = line.rfind(')');
  if (comm_end == std::string_view::npos) return std::nullopt;
  const auto fields = SplitBlanks(line.substr(comm_end + 1));
  // fields[0] is field 3 (state); utime is field 14, stime 15, starttime 22.
  if (fields.size() < 20) return std::nullopt;
  const auto utime = ToUnsigned(fields[11]);
  const auto stime = ToUnsigned(fields[12]);
  const auto start = ToUnsigned(fields[19]);
  if (!utime || !stime || !start) return std::nullopt;
  return StatTimes{*utime, *stime, *start};
}

std::optional<std::uint64_t> ParseStatusKilobytes(std::string_view status, std::string_view key) {
  std::size_t line_start = 0;
  while (line_start < status.size()) {
    auto line_end = status.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = status.size();
    const auto line = status.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':') {
      continue;
    }
    const auto fields = SplitBlanks(line.substr(key.size() + 1));
    if (fields.empty()) return std::nullopt;
    const auto kilobytes = ToUnsigned(fields.front());
    if (!kilobytes) return std::nullopt;
    return *kilobytes * 1024;
  }
  return std::nullopt;
}

ProcessStats ReadProcessStats(const Filesystem& proc) {
  ProcessStats stats;
  const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::string text;
  if (proc.ReadFile("self/stat", &text) == 0) {
    if (const auto times = ParseStatLine(text)) {
      stats.cpu_seconds =
          static_cast<double>(times->utime_ticks + times->stime_ticks) / ticks_per_second;
      if (const auto boot = BootTimeSeconds(proc)) {
        stats.start_time_seconds =
            static_cast<double>(*boot) + static_cast<double>(times->start_ticks) / ticks_per_second;
      }
    }
  }
  if (proc.ReadFile("self/status", &text) == 0) {
    stats.resident_bytes = ParseStatusKilobytes(text, "VmRSS");
    stats.peak_resident_bytes = ParseStatusKilobytes(text, "VmHWM");
    stats.virtual_bytes = ParseStatusKilobytes(text, "VmSize");
  }
  stats.open_fds = CountOpenFds(proc);
  stats.max_fds = SoftOpenFileLimit(proc);
  return stats;
}

}  // namespace rail::sysfs
