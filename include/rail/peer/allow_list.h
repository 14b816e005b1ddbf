// responder.allowed_networks: the peer networks whose connections the responder accepts. Others
// are closed at accept, before a byte is read, and counted (reason "not_allowed").
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rail::peer {

// One IPv4 or IPv6 network, "10.0.0.0/8", "fd00::/8"; a bare address is a /32 or /128.
struct Network {
  bool ipv6 = false;
  std::array<std::uint8_t, 16> address{};  // IPv4 in the first 4 bytes; host bits cleared
  unsigned prefix_length = 0;
  std::string text;  // as written, for messages
};

// nullopt + `error` for text that is not ADDRESS[/PREFIX], or a prefix too long for its family.
// Host bits set under the prefix ("10.0.0.1/8") are an error: such a typo would widen the net.
std::optional<Network> ParseNetwork(std::string_view text, std::string* error);

class NetworkAllowList {
 public:
  NetworkAllowList() = default;  // empty: every address is allowed
  explicit NetworkAllowList(std::vector<Network> networks) : networks_(std::move(networks)) {}

  bool empty() const { return networks_.empty(); }
  // IPv4-mapped IPv6 peers (::ffff:a.b.c.d on a dual-stack socket) match the IPv4 networks.
  bool Allows(const sockaddr_storage& peer) const;
  bool Allows(std::string_view numeric_address) const;

 private:
  bool Matches(bool ipv6, const std::uint8_t* address) const;

  std::vector<Network> networks_;
};

}  // namespace rail::peer
