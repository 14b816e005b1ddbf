// base::ReadInterfaceAddresses against an independent reading of the same namespace: iproute2's
// `ip -o addr show`, which asks the kernel over its own netlink socket.
#include "rail/base/interface_addresses.h"

#include <gtest/gtest.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace rail::base {
namespace {

// "lo inet 127.0.0.1/8" for each line of `ip -o addr show`; empty when ip is not installed.
std::vector<std::string> IpAddrShow() {
  std::vector<std::string> found;
  const std::unique_ptr<FILE, decltype(&pclose)> pipe(popen("ip -o addr show 2>/dev/null", "r"),
                                                      &pclose);
  if (!pipe) return found;
  char line[1024];
  while (fgets(line, sizeof line, pipe.get()) != nullptr) {
    // "1: lo    inet 127.0.0.1/8 scope host lo\       valid_lft forever ..."
    std::istringstream words(line);
    std::string index, interface, family, address;
    words >> index >> interface >> family >> address;
    interface = interface.substr(0, interface.find('@'));  // "veth0@if3"
    if (family == "inet" || family == "inet6")
      found.push_back(interface + " " + family + " " + address);
  }
  return found;
}

TEST(ReadInterfaceAddressesTest, MatchesIproute2) {
  const std::vector<std::string> expected = IpAddrShow();
  if (expected.empty()) GTEST_SKIP() << "`ip -o addr show` (iproute2) gave no address to compare";
  std::vector<std::string> ours;
  for (const InterfaceAddress& address : ReadInterfaceAddresses()) {
    ours.push_back(address.interface + (address.family == AF_INET ? " inet " : " inet6 ") +
                   address.address + "/" + std::to_string(address.prefix_length));
  }
  for (const std::string& line : expected) {
    EXPECT_NE(std::find(ours.begin(), ours.end(), line), ours.end()) << line << " is missing";
  }
  EXPECT_EQ(ours.size(), expected.size());
}

TEST(ReadInterfaceAddressesTest, LoopbackHasItsIpv4Address) {
  const auto addresses = ReadInterfaceAddresses();
  if (addresses.empty()) GTEST_SKIP() << "this network namespace has no address";
  EXPECT_TRUE(std::any_of(addresses.begin(), addresses.end(), [](const InterfaceAddress& address) {
    return address.interface == "lo" && address.family == AF_INET &&
           address.address == "127.0.0.1" && address.prefix_length == 8;
  }));
}

}  // namespace
}  // namespace rail::base
