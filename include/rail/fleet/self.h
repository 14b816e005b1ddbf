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

// Who this agent is among `targets`: `configured` (fleet.self) when they list it, or, without
// one, FindSelf's answer. Otherwise nullopt and *error: a configured self the targets do not list
// is a configuration error, never a plan of its own, and the error names it and what the targets
// hold for this host instead (the one target `identity` matches, or none).
std::optional<std::string> ResolveSelf(const std::vector<Target>& targets,
                                       const std::optional<std::string>& configured,
                                       const SelfIdentity& identity, std::string* error);

// This host's addresses and names, read live (getifaddrs, gethostname).
SelfIdentity LocalIdentity(std::uint16_t port);

}  // namespace rail::fleet
