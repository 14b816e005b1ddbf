#include "rail/inventory/gid_cache.h"

namespace rail::inventory {

std::vector<sysfs::GidEntry> GidCache::Get(
    const std::string& device, unsigned port,
    const std::function<std::vector<sysfs::GidEntry>()>& read) {
  const auto now = clock_.Now();
  {
    std::lock_guard lock(mutex_);
    if (changes_ != nullptr) Poll(now);
    const auto found = entries_.find({device, port});
    if (found != entries_.end() && Fresh(found->second, now)) return found->second.gids;
  }
  auto gids = read();
  std::lock_guard lock(mutex_);
  // Ports that vanished keep their entry until they come back; the map is bounded by the ports
  // a host ever had.
  entries_[{device, port}] = Entry{now, gids};
  follow_due_ = true;
  return gids;
}

bool GidCache::Fresh(const Entry& entry, base::TimePoint now) const {
  if (refresh_interval_.count() <= 0 || now - entry.read_at >= refresh_interval_) return false;
  return !changed_at_ || entry.read_at >= *changed_at_ + kSettle;
}

void GidCache::Poll(base::TimePoint now) {
  if (polled_at_ && now - *polled_at_ < kPollInterval) return;
  polled_at_ = now;
  // Followed before the notifications are read: those about a netdev a new table names count.
  if (follow_due_) FollowNetdevs();
  follow_due_ = false;
  if (changes_->Changed()) changed_at_ = now;
}

void GidCache::FollowNetdevs() {
  std::set<std::string> netdevs;
  for (const auto& [key, entry] : entries_) {
    for (const auto& gid : entry.gids) {
      if (gid.netdev && !gid.netdev->empty()) netdevs.insert(*gid.netdev);
    }
  }
  // Again after any read, same names or not: a netdev deleted and made again under its name has
  // another ifindex.
  changes_->Follow(netdevs);
}

}  // namespace rail::inventory
