#include "rail/inventory/gid_cache.h"

namespace rail::inventory {

std::vector<sysfs::GidEntry> GidCache::Get(
    const std::string& device, unsigned port,
    const std::function<std::vector<sysfs::GidEntry>()>& read) {
  const auto now = clock_.Now();
  {
    std::lock_guard lock(mutex_);
    const auto found = entries_.find({device, port});
    if (found != entries_.end() && refresh_interval_.count() > 0 &&
        now - found->second.read_at < refresh_interval_) {
      return found->second.gids;
    }
  }
  auto gids = read();
  std::lock_guard lock(mutex_);
  // Ports that vanished keep their entry until they come back; the map is bounded by the ports
  // a host ever had.
  entries_[{device, port}] = Entry{now, gids};
  return gids;
}

}  // namespace rail::inventory
