// The responder's options from the configuration's responder section.
#pragma once

#include <memory>
#include <string>

#include "rail/base/clock.h"
#include "rail/peer/responder.h"
#include "rail/probing/config.h"
#include "rail/probing/wiring.h"
#include "rail/sysfs/filesystem.h"

namespace rail::probing::detail {

// responder.name, else the host name: what this agent calls itself in its welcome.
std::string OwnName(const ResponderConfig& config);

// Throws ConfigError for an unusable listen address or allowed network.
peer::ResponderOptions MakeResponderOptions(const ResponderConfig& config, bool peer_insecure,
                                            const ProbeWiring& wiring, const sysfs::Filesystem& sys,
                                            const base::Clock& clock);

}  // namespace rail::probing::detail
