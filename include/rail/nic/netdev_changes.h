// Whether this network namespace's netdevs changed since last asked, for what follows their
// addresses: the kernel fills a RoCE port's GID table from the addresses of its netdev and of the
// devices stacked on it (VLANs, bonds, macvlans), from a workqueue of its own.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "rail/sysfs/filesystem.h"

struct mnl_socket;

namespace rail::nic {

class NetdevChanges {
 public:
  virtual ~NetdevChanges() = default;
  // The netdevs whose changes matter, by name. One is followed only when this namespace has a
  // netdev of that name with the ifindex the sysfs tree gives it (class/net/<name>/ifindex): a
  // fixture tree's, or another namespace's, is not.
  virtual void Follow(const std::set<std::string>& netdevs) = 0;
  // True when, since the last call, a followed netdev gained or lost an address or changed
  // (state, name, master, deleted), a device appeared over one (its IFLA_LINK or IFLA_MASTER), or
  // the kernel dropped notifications that might have said so.
  virtual bool Changed() = 0;
};

// rtnetlink's RTMGRP_LINK, RTMGRP_IPV4_IFADDR and RTMGRP_IPV6_IFADDR, read without blocking when
// asked: no thread of its own. Thread-safe.
class RtnetlinkChanges final : public NetdevChanges {
 public:
  // Null, with `error` set, when the socket cannot be opened or bound. `sys` (the tree read,
  // --path.sysfs) outlives it.
  static std::unique_ptr<RtnetlinkChanges> Open(const sysfs::Filesystem& sys, std::string* error);
  ~RtnetlinkChanges() override;
  void Follow(const std::set<std::string>& netdevs) override;
  bool Changed() override;
  // How many netdevs are followed now.
  std::size_t Followed() const;

 private:
  RtnetlinkChanges(const sysfs::Filesystem& sys, mnl_socket* socket);
  const sysfs::Filesystem& sys_;
  mnl_socket* const socket_;  // owned; closed by the destructor
  mutable std::mutex mutex_;
  std::set<unsigned> followed_;
  std::vector<std::byte> buffer_;  // one datagram at a time, kept between calls
};

namespace detail {
// Whether the rtnetlink notifications in `messages` (one datagram) name a followed ifindex:
// RTM_NEWADDR/RTM_DELADDR by ifa_index; RTM_NEWLINK/RTM_DELLINK by ifi_index, IFLA_LINK or
// IFLA_MASTER. Malformed messages count as a change.
bool NamesFollowed(std::span<const std::byte> messages, const std::set<unsigned>& followed);
}  // namespace detail

}  // namespace rail::nic
