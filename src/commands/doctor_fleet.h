// doctor's fleet findings: the configuration's discovery run once, as the agent runs it, and
// whether this agent is among the targets it gives.
#pragma once

#include <vector>

#include "rail/agent/config.h"
#include "rail/commands/doctor.h"
#include "rail/fleet/self.h"
#include "rail/fleet/target.h"

namespace rail::commands {

// fleet_self: PASS when fleet.self is one of `targets` (or, without fleet.self, when exactly one
// target is this host by `identity`); FAIL naming fleet.self and what the targets hold for this
// host instead. INFO when discovery gave no target at all (fleet_discovery says why).
Finding SelfFinding(const probing::FleetConfig& fleet, const std::vector<fleet::Target>& targets,
                    const fleet::SelfIdentity& identity);

// One fleet_discovery finding per source (its targets, or why its refresh failed) and the
// fleet_self finding; none without a fleet section. Blocks for at most the sources' timeouts.
std::vector<Finding> FleetFindings(const agent::AgentConfig& config);

}  // namespace rail::commands
