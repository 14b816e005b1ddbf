// GID tables change when addresses are added or removed, not between two scrapes, and they are
// most of the files a scrape would read (128 slots x 3 files per port on a large host). They
// are re-read at most once per refresh interval; everything else is read on every scrape.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/sysfs/infiniband.h"

namespace rail::inventory {

class GidCache {
 public:
  // A zero interval re-reads on every call.
  explicit GidCache(std::chrono::milliseconds refresh_interval,
                    const base::Clock& clock = base::SystemClock())
      : refresh_interval_(refresh_interval), clock_(clock) {}

  // The port's GID table, read with `read` when absent or older than the refresh interval.
  std::vector<sysfs::GidEntry> Get(const std::string& device, unsigned port,
                                   const std::function<std::vector<sysfs::GidEntry>()>& read);

  std::chrono::milliseconds refresh_interval() const { return refresh_interval_; }

 private:
  struct Entry {
    base::TimePoint read_at;
    std::vector<sysfs::GidEntry> gids;
  };
  const std::chrono::milliseconds refresh_interval_;
  const base::Clock& clock_;
  std::mutex mutex_;
  std::map<std::pair<std::string, unsigned>, Entry> entries_;
};

}  // namespace rail::inventory
