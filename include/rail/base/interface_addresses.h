// The addresses configured on this network namespace's interfaces, read once for every layer that
// needs them (the health checks' subnets, a rail's IPv4 for probes, which fleet target is this
// host).
#pragma once

#include <string>
#include <vector>

namespace rail::base {

struct InterfaceAddress {
  std::string interface;  // e.g. "enp1s0f0np0"
  int family = 0;         // AF_INET or AF_INET6
  std::string address;    // as inet_ntop(3) writes it: "192.168.100.11", "fe80::1"
  unsigned prefix_length = 0;
};

// Every IPv4 and IPv6 address, from getifaddrs(3) (netlink underneath; sysfs has no addresses), in
// the kernel's order. Empty when getifaddrs fails.
std::vector<InterfaceAddress> ReadInterfaceAddresses();

}  // namespace rail::base
