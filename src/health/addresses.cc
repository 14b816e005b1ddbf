// ReadInterfaceAddresses: the IPv4 addresses of this network namespace, from getifaddrs(3)
// (sysfs has no addresses; netlink is what getifaddrs speaks underneath).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <bit>
#include <memory>

#include "rail/health/checks.h"

namespace rail::health {

std::vector<InterfaceAddress> ReadInterfaceAddresses() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  const std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owner(list, &freeifaddrs);
  std::vector<InterfaceAddress> addresses;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    InterfaceAddress address;
    address.ifname = entry->ifa_name;
    const auto* ipv4 = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
    char text[INET_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET, &ipv4->sin_addr, text, sizeof text) == nullptr) continue;
    address.address = text;
    if (entry->ifa_netmask != nullptr) {
      const auto* mask = reinterpret_cast<const sockaddr_in*>(entry->ifa_netmask);
      address.prefix_length = static_cast<unsigned>(std::popcount(ntohl(mask->sin_addr.s_addr)));
    }
    addresses.push_back(std::move(address));
  }
  return addresses;
}

}  // namespace rail::health
