// ReadInterfaceAddresses: the IPv4 addresses the subnet checks compare, from base's reader.
#include <netinet/in.h>

#include "rail/base/interface_addresses.h"
#include "rail/health/checks.h"

namespace rail::health {

std::vector<InterfaceAddress> ReadInterfaceAddresses() {
  std::vector<InterfaceAddress> addresses;
  for (const base::InterfaceAddress& address : base::ReadInterfaceAddresses()) {
    if (address.family != AF_INET) continue;
    addresses.push_back({address.interface, address.address, address.prefix_length});
  }
  return addresses;
}

}  // namespace rail::health
