#include "rail/fleet/self.h"

#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "rail/base/interface_addresses.h"
#include "rail/peer/connection.h"

namespace rail::fleet {
namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool IsOurs(const std::string& host, const SelfIdentity& identity) {
  const auto& addresses = identity.addresses;
  const auto& names = identity.hostnames;
  return std::find(addresses.begin(), addresses.end(), host) != addresses.end() ||
         std::find(names.begin(), names.end(), Lower(host)) != names.end();
}

}  // namespace

std::optional<std::string> FindSelf(const std::vector<Target>& targets,
                                    const SelfIdentity& identity, std::string* error) {
  std::set<std::string> matches;
  for (const auto& target : targets) {
    std::string parse_error;
    const auto host_port = peer::ParseHostPort(target.address, 0, &parse_error);
    if (!host_port || host_port->port != identity.port) continue;
    if (IsOurs(host_port->host, identity)) matches.insert(target.address);
  }
  if (matches.size() == 1) return *matches.begin();
  if (matches.empty()) {
    *error = "no target has this host's address or name and port " + std::to_string(identity.port);
  } else {
    *error = "several targets are this host (" + *matches.begin() + ", " +
             *std::next(matches.begin()) + "): set fleet.self";
  }
  return std::nullopt;
}

std::optional<std::string> ResolveSelf(const std::vector<Target>& targets,
                                       const std::optional<std::string>& configured,
                                       const SelfIdentity& identity, std::string* error) {
  if (!configured) return FindSelf(targets, identity, error);
  const bool listed = std::any_of(targets.begin(), targets.end(), [&](const Target& target) {
    return target.address == *configured;
  });
  if (listed) return configured;
  std::string found_error;
  const auto found = FindSelf(targets, identity, &found_error);
  *error = "fleet.self " + *configured + " is not one of them; " +
           (found ? "by its addresses this host is " + *found : found_error);
  return std::nullopt;
}

SelfIdentity LocalIdentity(std::uint16_t port) {
  SelfIdentity identity;
  identity.port = port;
  for (const base::InterfaceAddress& address : base::ReadInterfaceAddresses())
    identity.addresses.push_back(address.address);
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) == 0 && name[0] != '\0') {
    identity.hostnames.push_back(Lower(name));
    addrinfo hints{};
    hints.ai_flags = AI_CANONNAME;
    addrinfo* info = nullptr;
    // The FQDN, when the resolver knows one: file_sd lists often name hosts fully.
    if (getaddrinfo(name, nullptr, &hints, &info) == 0) {
      if (info->ai_canonname != nullptr) identity.hostnames.push_back(Lower(info->ai_canonname));
      freeaddrinfo(info);
    }
  }
  return identity;
}

}  // namespace rail::fleet
