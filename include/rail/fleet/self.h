// Which of the discovered targets is this agent. Every agent must place itself on the rings by the
// same target the others see, so it looks itself up in the discovery data rather than naming
// itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rail/fleet/target.h"

namespace rail::fleet {

struct SelfIdentity {
  std::vector<std::string> addresses;  // this host's interface addresses (IPv4 and IPv6, no zone)
  std::vector<std::string> hostnames;  // gethostname() and its FQDN, lower case
  std::uint16_t port = 0;              // the responder's port
};

// The target whose port is `identity.port` and whose host is one of its addresses or names;
// nullopt when none is, or when several are (an ambiguity only fleet.self can settle).
std::optional<std::string> FindSelf(const std::vector<Target>& targets,
                                    const SelfIdentity& identity, std::string* error);

// fleet.self when it is one of `targets`. Otherwise nullopt and *error naming it and what the
// targets hold for this host instead (the one target `identity` matches, or none): a configured
// self the others do not list is a configuration error, never a plan of its own.
std::optional<std::string> ConfiguredSelf(const std::vector<Target>& targets,
                                          const std::string& self, const SelfIdentity& identity,
                                          std::string* error);

// This host's addresses and names, read live (getifaddrs, gethostname).
SelfIdentity LocalIdentity(std::uint16_t port);

}  // namespace rail::fleet
