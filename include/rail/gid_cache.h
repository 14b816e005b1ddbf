// GID tables change when addresses are added or removed, not between two scrapes, and they are
// most of the files a scrape would read (128 slots x 3 files per port on a large host). They
// are re-read at most once per refresh interval; everything else is read on every scrape.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "rail/sysfs/infiniband.h"

namespace rail {

class GidCache {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // A zero interval re-reads on every call.
  explicit GidCache(
      std::chrono::milliseconds refresh_interval,
      Clock now = [] { return std::chrono::steady_clock::now(); })
      : refresh_interval_(refresh_interval), now_(std::move(now)) {}

  // The port's GID table, read with `read` when absent or older than the refresh interval.
  std::vector<sysfs::GidEntry> Get(const std::string& device, unsigned port,
                                   const std::function<std::vector<sysfs::GidEntry>()>& read);

  std::chrono::milliseconds refresh_interval() const { return refresh_interval_; }

 private:
  struct Entry {
    std::chrono::steady_clock::time_point read_at;
    std::vector<sysfs::GidEntry> gids;
  };
  const std::chrono::milliseconds refresh_interval_;
  Clock now_;
  std::mutex mutex_;
  std::map<std::pair<std::string, unsigned>, Entry> entries_;
};

}  // namespace rail
