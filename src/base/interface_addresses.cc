#include "rail/base/interface_addresses.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <bit>
#include <cstdint>
#include <memory>

namespace rail::base {
namespace {

// The bits set in a netmask; a host address's length (32, 128) without one.
unsigned PrefixLength(int family, const sockaddr* netmask) {
  if (netmask == nullptr) return family == AF_INET ? 32 : 128;
  if (netmask->sa_family == AF_INET) {
    const auto* mask = reinterpret_cast<const sockaddr_in*>(netmask);
    return static_cast<unsigned>(std::popcount(ntohl(mask->sin_addr.s_addr)));
  }
  if (netmask->sa_family == AF_INET6) {
    unsigned bits = 0;
    for (const std::uint8_t byte :
         reinterpret_cast<const sockaddr_in6*>(netmask)->sin6_addr.s6_addr)
      bits += static_cast<unsigned>(std::popcount(byte));
    return bits;
  }
  return 0;
}

}  // namespace

std::vector<InterfaceAddress> ReadInterfaceAddresses() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  const std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owner(list, &freeifaddrs);
  std::vector<InterfaceAddress> addresses;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr) continue;
    const int family = entry->ifa_addr->sa_family;
    const void* raw = nullptr;
    if (family == AF_INET) {
      raw = &reinterpret_cast<const sockaddr_in*>(entry->ifa_addr)->sin_addr;
    } else if (family == AF_INET6) {
      raw = &reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr)->sin6_addr;
    } else {
      continue;  // AF_PACKET: the link itself, no address
    }
    char text[INET6_ADDRSTRLEN] = {};
    if (inet_ntop(family, raw, text, sizeof text) == nullptr) continue;
    addresses.push_back({entry->ifa_name, family, text, PrefixLength(family, entry->ifa_netmask)});
  }
  return addresses;
}

}  // namespace rail::base
