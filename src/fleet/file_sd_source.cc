// fleet.discovery.file_sd: Prometheus file_sd files, re-read only when they change.
#include <glob.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "rail/fleet/discovery.h"
#include "rail/fleet/file_sd.h"

namespace rail::fleet {
namespace {

// A peers file is a few kilobytes per hundred hosts; anything this large is a mistake (a log
// file named by a glob) and reading it would stall the fleet thread.
constexpr off_t kMaxFileBytes = 16 << 20;

class GlobResult {
 public:
  GlobResult() = default;
  GlobResult(const GlobResult&) = delete;
  GlobResult& operator=(const GlobResult&) = delete;
  ~GlobResult() { globfree(&glob_); }
  glob_t* get() { return &glob_; }

 private:
  glob_t glob_{};
};

bool IsPattern(const std::string& path) {
  return path.find_first_of("*?[") != std::string::npos;
}

// The files a pattern names now, or an error. A pattern that matches nothing is no error (the
// directory a deployment fills later); a plain path must exist.
std::optional<std::vector<std::string>> Expand(const std::string& pattern, std::string* error) {
  if (!IsPattern(pattern)) return std::vector<std::string>{pattern};
  GlobResult matches;
  const int status = glob(pattern.c_str(), 0, nullptr, matches.get());
  if (status == GLOB_NOMATCH) return std::vector<std::string>{};
  if (status != 0) {
    *error = pattern + ": glob failed (" +
             (status == GLOB_NOSPACE ? "out of memory" : "read error") + ")";
    return std::nullopt;
  }
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < matches.get()->gl_pathc; ++i) {
    paths.emplace_back(matches.get()->gl_pathv[i]);
  }
  return paths;
}

// What says a file may have changed. The inode catches a file replaced by rename with the same
// size within one timestamp tick.
struct Stamp {
  off_t size = 0;
  timespec mtime{};
  ino_t inode = 0;
  bool operator==(const Stamp& other) const {
    return size == other.size && mtime.tv_sec == other.mtime.tv_sec &&
           mtime.tv_nsec == other.mtime.tv_nsec && inode == other.inode;
  }
};

struct Parsed {
  Stamp stamp;
  std::vector<Target> targets;
};

std::string ErrnoText(int error) {
  return std::strerror(error);
}

class FileSdSource final : public Source {
 public:
  explicit FileSdSource(FileSdConfig config) : config_(std::move(config)) {}

  std::string Name() const override {
    std::string name = "file_sd:";
    for (std::size_t i = 0; i < config_.files.size(); ++i) {
      name += (i ? "," : "") + config_.files[i];
    }
    return name;
  }
  base::Duration RefreshInterval() const override { return config_.refresh_interval; }

  // Local files: nothing to abandon.
  FetchResult Fetch(const base::Clock& /*clock*/, const std::atomic<bool>& /*abandon*/) override {
    std::map<std::string, Parsed> seen;
    std::vector<std::vector<Target>> lists;
    for (const auto& pattern : config_.files) {
      std::string error;
      const auto paths = Expand(pattern, &error);
      if (!paths) return FetchResult{std::nullopt, error};
      for (const auto& path : *paths) {
        if (seen.count(path)) continue;
        auto parsed = Load(path, &error);
        if (!parsed) return FetchResult{std::nullopt, error};
        lists.push_back(parsed->targets);
        seen.emplace(path, std::move(*parsed));
      }
    }
    // Files no pattern names any more are forgotten with the rest.
    cache_ = std::move(seen);
    return FetchResult{MergeTargets(lists), {}};
  }

 private:
  // The file's targets: from the cache when its stamp is unchanged, else read and parsed.
  std::optional<Parsed> Load(const std::string& path, std::string* error) const {
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) {
      *error = path + ": " + ErrnoText(errno);
      return std::nullopt;
    }
    if (!S_ISREG(info.st_mode)) {
      *error = path + ": not a regular file";
      return std::nullopt;
    }
    const Stamp stamp{info.st_size, info.st_mtim, info.st_ino};
    if (const auto cached = cache_.find(path);
        cached != cache_.end() && cached->second.stamp == stamp) {
      return cached->second;
    }
    if (info.st_size > kMaxFileBytes) {
      *error = path + ": larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB";
      return std::nullopt;
    }
    std::ifstream file(path, std::ios::binary);
    std::string text;
    if (file) text.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    if (!file.is_open() || file.bad()) {
      *error = path + ": cannot be read: " + ErrnoText(errno);
      return std::nullopt;
    }
    try {
      return Parsed{stamp, ParseFileSd(text, path)};
    } catch (const FileSdError& bad) {
      *error = bad.what();
      return std::nullopt;
    }
  }

  const FileSdConfig config_;
  std::map<std::string, Parsed> cache_;  // by path; only files that parsed
};

}  // namespace

std::unique_ptr<Source> MakeFileSdSource(FileSdConfig config) {
  return std::make_unique<FileSdSource>(std::move(config));
}

}  // namespace rail::fleet
