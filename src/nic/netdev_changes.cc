// An rtnetlink socket joined to the link and address groups, drained when asked.
#include "rail/nic/netdev_changes.h"

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "rail/sysfs/values.h"

namespace rail::nic {
namespace {

struct FollowedSearch {
  const std::set<unsigned>* followed;
  bool found = false;
};

int OnLinkNotificationAttribute(const nlattr* attribute, void* data) {
  auto* search = static_cast<FollowedSearch*>(data);
  const auto type = mnl_attr_get_type(attribute);
  if ((type == IFLA_LINK || type == IFLA_MASTER) &&
      mnl_attr_validate(attribute, MNL_TYPE_U32) >= 0 &&
      search->followed->contains(mnl_attr_get_u32(attribute))) {
    search->found = true;
  }
  return MNL_CB_OK;
}

int OnNotification(const nlmsghdr* message, void* data) {
  auto* search = static_cast<FollowedSearch*>(data);
  switch (message->nlmsg_type) {
    case RTM_NEWADDR:
    case RTM_DELADDR: {
      if (message->nlmsg_len < mnl_nlmsg_size(sizeof(ifaddrmsg))) return MNL_CB_ERROR;
      const auto* address = static_cast<const ifaddrmsg*>(mnl_nlmsg_get_payload(message));
      if (search->followed->contains(address->ifa_index)) search->found = true;
      return MNL_CB_OK;
    }
    case RTM_NEWLINK:
    case RTM_DELLINK: {
      if (message->nlmsg_len < mnl_nlmsg_size(sizeof(ifinfomsg))) return MNL_CB_ERROR;
      const auto* link = static_cast<const ifinfomsg*>(mnl_nlmsg_get_payload(message));
      if (link->ifi_index > 0 &&
          search->followed->contains(static_cast<unsigned>(link->ifi_index))) {
        search->found = true;
        return MNL_CB_OK;
      }
      return mnl_attr_parse(message, sizeof(ifinfomsg), OnLinkNotificationAttribute, data) < 0
                 ? MNL_CB_ERROR
                 : MNL_CB_OK;
    }
    default:
      return MNL_CB_OK;
  }
}

constexpr std::size_t kDatagramBytes = 32768;

}  // namespace

namespace detail {

bool NamesFollowed(std::span<const std::byte> messages, const std::set<unsigned>& followed) {
  FollowedSearch search{&followed};
  // Sequence and port 0: notifications, which answer no request.
  const int result = mnl_cb_run(messages.data(), messages.size(), 0, 0, OnNotification, &search);
  return search.found || result == MNL_CB_ERROR;
}

}  // namespace detail

std::unique_ptr<RtnetlinkChanges> RtnetlinkChanges::Open(const sysfs::Filesystem& sys,
                                                         std::string* error) {
  mnl_socket* socket = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (socket == nullptr) {
    *error = std::string("netlink socket: ") + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<RtnetlinkChanges> changes(new RtnetlinkChanges(sys, socket));
  if (mnl_socket_bind(socket, RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR,
                      MNL_SOCKET_AUTOPID) < 0) {
    *error = std::string("netlink bind: ") + std::strerror(errno);
    return nullptr;
  }
  return changes;
}

RtnetlinkChanges::RtnetlinkChanges(const sysfs::Filesystem& sys, mnl_socket* socket)
    : sys_(sys), socket_(socket) {}

RtnetlinkChanges::~RtnetlinkChanges() {
  mnl_socket_close(socket_);
}

void RtnetlinkChanges::Follow(const std::set<std::string>& netdevs) {
  std::set<unsigned> followed;
  for (const std::string& name : netdevs) {
    std::string text;
    if (sys_.ReadFile("class/net/" + name + "/ifindex", &text) != 0) continue;
    const auto ifindex = sysfs::ParseUnsigned(text);
    if (ifindex && *ifindex != 0 && if_nametoindex(name.c_str()) == *ifindex) {
      followed.insert(static_cast<unsigned>(*ifindex));
    }
  }
  std::lock_guard lock(mutex_);
  followed_ = std::move(followed);
}

bool RtnetlinkChanges::Changed() {
  std::lock_guard lock(mutex_);
  // A link notification carries the netdev's statistics and attributes: a few KiB, under this.
  if (buffer_.empty()) buffer_.resize(kDatagramBytes);
  bool changed = false;
  for (;;) {
    const ssize_t received = mnl_socket_recvfrom(socket_, buffer_.data(), buffer_.size());
    if (received < 0) {
      if (errno == EINTR) continue;
      // ENOSPC: a datagram longer than the buffer, cut. Like one the kernel dropped (ENOBUFS:
      // the socket overflowed), it may have named a followed netdev.
      if (errno == ENOSPC) {
        changed = changed || !followed_.empty();
        continue;
      }
      return changed || (errno == ENOBUFS && !followed_.empty());
    }
    if (!changed && !followed_.empty()) {
      changed = detail::NamesFollowed(std::span(buffer_.data(), static_cast<std::size_t>(received)),
                                      followed_);
    }
  }
}

std::size_t RtnetlinkChanges::Followed() const {
  std::lock_guard lock(mutex_);
  return followed_.size();
}

}  // namespace rail::nic
