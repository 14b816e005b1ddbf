#include "rail/peer/allow_list.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>

namespace rail::peer {
namespace {

bool PrefixMatches(const std::uint8_t* a, const std::uint8_t* b, unsigned bits) {
  const unsigned whole = bits / 8;
  if (std::memcmp(a, b, whole) != 0) return false;
  const unsigned rest = bits % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xff << (8 - rest));
  return (a[whole] & mask) == (b[whole] & mask);
}

bool HostBitsClear(const std::uint8_t* address, unsigned bits, unsigned total_bits) {
  for (unsigned bit = bits; bit < total_bits; ++bit) {
    if ((address[bit / 8] >> (7 - bit % 8)) & 1) return false;
  }
  return true;
}

}  // namespace

std::optional<Network> ParseNetwork(std::string_view text, std::string* error) {
  Network network;
  network.text = std::string(text);
  const auto slash = text.find('/');
  const std::string address(text.substr(0, slash));
  if (inet_pton(AF_INET, address.c_str(), network.address.data()) == 1) {
    network.ipv6 = false;
  } else if (inet_pton(AF_INET6, address.c_str(), network.address.data()) == 1) {
    network.ipv6 = true;
  } else {
    *error = "'" + network.text + "' is not an IPv4 or IPv6 network (ADDRESS[/PREFIX])";
    return std::nullopt;
  }
  const unsigned total_bits = network.ipv6 ? 128 : 32;
  network.prefix_length = total_bits;
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    unsigned prefix = 0;
    const auto [end, failure] =
        std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (digits.empty() || failure != std::errc() || end != digits.data() + digits.size() ||
        prefix > total_bits) {
      *error = "'" + network.text + "': the prefix length must be 0.." + std::to_string(total_bits);
      return std::nullopt;
    }
    network.prefix_length = prefix;
  }
  if (!HostBitsClear(network.address.data(), network.prefix_length, total_bits)) {
    *error = "'" + network.text + "' has host bits set under /" +
             std::to_string(network.prefix_length) + " (did you mean the network address?)";
    return std::nullopt;
  }
  return network;
}

bool NetworkAllowList::Matches(bool ipv6, const std::uint8_t* address) const {
  for (const Network& network : networks_) {
    if (network.ipv6 == ipv6 &&
        PrefixMatches(network.address.data(), address, network.prefix_length)) {
      return true;
    }
  }
  return false;
}

bool NetworkAllowList::Allows(const sockaddr_storage& peer) const {
  if (networks_.empty()) return true;
  if (peer.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(peer);
    return Matches(false, reinterpret_cast<const std::uint8_t*>(&v4.sin_addr));
  }
  if (peer.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(peer);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&v6.sin6_addr);
    if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) return Matches(false, bytes + 12);
    return Matches(true, bytes);
  }
  return false;  // not an IP peer: nothing to match
}

bool NetworkAllowList::Allows(std::string_view numeric_address) const {
  if (networks_.empty()) return true;
  std::string error;
  const std::optional<Network> host = ParseNetwork(numeric_address, &error);
  if (!host || numeric_address.find('/') != std::string_view::npos) return false;
  if (host->ipv6) {
    in6_addr v6{};
    std::memcpy(&v6, host->address.data(), sizeof(v6));
    if (IN6_IS_ADDR_V4MAPPED(&v6)) return Matches(false, host->address.data() + 12);
  }
  return Matches(host->ipv6, host->address.data());
}

}  // namespace rail::peer
