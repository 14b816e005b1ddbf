// doctor's neighbour findings: each rail's switch port as lldpd heard it over LLDP, or why it is
// not known and the command that fixes that.
#pragma once

#include <string>
#include <vector>

#include "rail/commands/doctor.h"
#include "rail/inventory/neighbors.h"
#include "rail/inventory/snapshot.h"

namespace rail::commands {

// One INFO `neighbor` finding per rail: "leaf-rail0 port Ethernet1/7 (...)" when lldpd heard the
// link partner; otherwise the state and its reason, with the remedy as its fix where one applies.
// Never a failure: which switch a rail should land on is not configured yet.
std::vector<Finding> NeighborFindings(const std::vector<inventory::RailNeighbors>& rails);

// Asks lldpd on `socket` (empty: its default) about the snapshot's rails and appends the findings.
// Only for this host's /sys: lldpd knows this host's netdevs, not a fixture tree's.
void NeighborFindings(inventory::Snapshot& snapshot, const std::string& socket,
                      std::vector<Finding>& out);

}  // namespace rail::commands
