// GID tables change when addresses are added or removed, not between two scrapes, and they are
// most of the files a scrape would read (128 or 255 slots per port, every slot a file). A table is
// re-read when its netdevs change, as rtnetlink tells in the agent's own namespace, and otherwise
// at most once per refresh interval: that bounds what no notification here announces (a pod's
// macvlan over the rail in a namespace of its own, an InfiniBand port's subnet prefix, an agent
// that reads another namespace's /sys).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/nic/netdev_changes.h"
#include "rail/sysfs/infiniband.h"

namespace rail::inventory {

class GidCache {
 public:
  // The kernel applies a netdev's change to the GID tables from a workqueue: a table read within
  // this long after the notification may predate it, and is read again once it has passed.
  static constexpr std::chrono::seconds kSettle{2};
  // The notifications are looked at, and the tables' netdevs followed again after a read, at most
  // this often: once for all the ports a scrape or a sample asks for.
  static constexpr std::chrono::seconds kPollInterval{1};

  // A zero interval re-reads on every call. `changes` (null: the interval alone) outlives the
  // cache; the netdevs that the tables name are followed.
  explicit GidCache(std::chrono::milliseconds refresh_interval,
                    const base::Clock& clock = base::SystemClock(),
                    nic::NetdevChanges* changes = nullptr)
      : refresh_interval_(refresh_interval), clock_(clock), changes_(changes) {}

  // The port's GID table, read with `read` when absent, older than the refresh interval, or read
  // before a change of a netdev it names had settled.
  std::vector<sysfs::GidEntry> Get(const std::string& device, unsigned port,
                                   const std::function<std::vector<sysfs::GidEntry>()>& read);

  std::chrono::milliseconds refresh_interval() const { return refresh_interval_; }

 private:
  struct Entry {
    base::TimePoint read_at;
    std::vector<sysfs::GidEntry> gids;
  };
  bool Fresh(const Entry& entry, base::TimePoint now) const;
  void Poll(base::TimePoint now);
  void FollowNetdevs();

  const std::chrono::milliseconds refresh_interval_;
  const base::Clock& clock_;
  nic::NetdevChanges* const changes_;
  std::mutex mutex_;
  std::map<std::pair<std::string, unsigned>, Entry> entries_;
  std::optional<base::TimePoint> changed_at_;  // when `changes_` last said so
  std::optional<base::TimePoint> polled_at_;
  bool follow_due_ = false;  // a table was read since the netdevs were last followed
};

}  // namespace rail::inventory
