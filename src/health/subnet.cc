// duplicate_subnet: the rail's IPv4 subnet must not also be configured on another interface, or
// the kernel (and UCX, which picks devices by route) may send the rail's traffic elsewhere.
#include <arpa/inet.h>
#include <spdlog/fmt/fmt.h>

#include <optional>

#include "health/check_helpers.h"

namespace rail::health::detail {
namespace {

std::optional<std::uint32_t> ParseIpv4(const std::string& text) {
  in_addr address{};
  if (inet_pton(AF_INET, text.c_str(), &address) != 1) return std::nullopt;
  return ntohl(address.s_addr);
}

std::uint32_t Mask(unsigned prefix_length) {
  return prefix_length == 0 ? 0 : ~std::uint32_t{0} << (32 - std::min(prefix_length, 32u));
}

// Two subnets overlap when they agree on the shorter prefix.
bool Overlap(std::uint32_t a, unsigned a_prefix, std::uint32_t b, unsigned b_prefix) {
  const std::uint32_t mask = Mask(std::min(a_prefix, b_prefix));
  return (a & mask) == (b & mask);
}

std::string Network(std::uint32_t address, unsigned prefix_length) {
  in_addr network{};
  network.s_addr = htonl(address & Mask(prefix_length));
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &network, text, sizeof text);
  return fmt::format("{}/{}", text, prefix_length);
}

}  // namespace

void CheckSubnets(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  const auto& addresses = Addresses(inputs);
  for (const auto& rail : Rails(inputs)) {
    if (rail.netdev.empty()) continue;
    bool has_address = false;
    std::vector<std::string> conflicts;
    for (const auto& own : addresses) {
      if (own.ifname != rail.netdev || own.prefix_length == 0) continue;
      const auto own_ip = ParseIpv4(own.address);
      if (!own_ip) continue;
      has_address = true;
      for (const auto& other : addresses) {
        if (other.ifname == rail.netdev || other.prefix_length == 0) continue;
        const auto other_ip = ParseIpv4(other.address);
        if (!other_ip || !Overlap(*own_ip, own.prefix_length, *other_ip, other.prefix_length)) {
          continue;
        }
        conflicts.push_back(fmt::format("{} ({}/{}) overlaps {} of {}", other.ifname, other.address,
                                        other.prefix_length, Network(*own_ip, own.prefix_length),
                                        rail.netdev));
      }
    }
    // Without an address on its netdev the rail has no subnet to share (roce_gid says so).
    if (!has_address) continue;
    out.push_back(Verdict("duplicate_subnet", rail.name, "",
                          conflicts.empty() ? std::string()
                                            : "subnet also configured on another interface: " +
                                                  Join(conflicts, "; ")));
  }
}

}  // namespace rail::health::detail
