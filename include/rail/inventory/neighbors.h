// The link partner of every rail: what lldpd heard on the rail's netdev, or why nothing can be
// heard there (no lldpd, the NIC's firmware taking the frames, an InfiniBand port).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/inventory/rails.h"
#include "rail/lldp/neighbors.h"
#include "rail/nic/ethtool.h"

namespace rail::inventory {

// Why a rail has the neighbours it has: the `state` label of rail_link_neighbor_source_info.
enum class NeighborState {
  kAnnounced,      // lldpd holds at least one neighbour on the rail's netdev
  kNoNeighbor,     // lldpd runs on the netdev and holds nothing: no LLDP from the switch, or
                   // its last announcement's TTL ran out
  kNotWatched,     // lldpd runs, but not on this netdev (its -I pattern or configuration)
  kNoLldpd,        // no lldpd listens on the socket
  kLldpdError,     // lldpd's socket exists and could not be asked (permissions)
  kFirmwareAgent,  // lldpd hears nothing while the NIC's firmware runs LLDP itself (ice's
                   // private flag fw-lldp-agent on): the firmware takes the frames
  kInfiniband,     // an InfiniBand port: no LLDP; the subnet manager knows its peer
  kNoNetdev,       // the rail has no netdev to listen on
};

// "ok", "no_neighbor", "not_watched", "no_lldpd", "lldpd_error", "firmware_lldp_agent",
// "infiniband", "no_netdev".
const char* NeighborStateName(NeighborState state);

// One neighbour with its age on the agent's wall clock.
struct Announcement {
  lldp::Neighbor neighbor;
  // Seconds since lldpd last saw the neighbour's information change (never negative).
  double age_seconds = 0;
};

struct RailNeighbors {
  std::string rail;
  std::string netdev;
  NeighborState state = NeighborState::kNoNeighbor;
  std::string reason;  // for people: what was found
  std::string remedy;  // the command that makes the neighbour readable; empty when none applies
  std::vector<Announcement> announcements;  // only when kAnnounced
};

// The state of one rail from what lldpd answered and, where lldpd heard nothing, whether the
// NIC's firmware runs its own LLDP agent (nullopt: unknown, no such flag).
NeighborState DecideNeighborState(const Rail& rail, const lldp::Neighbors& lldpd,
                                  std::optional<bool> firmware_agent);

// Whether the netdev's driver has a private flag saying its firmware runs LLDP, and its value:
// ice's "fw-lldp-agent" (mlx5_core and bnxt_en have none: docs/cabling.md).
std::optional<bool> FirmwareLldpAgent(const nic::StatisticsSource& nic, const std::string& netdev);

// One entry per rail, in the rails' order. `nic` answers the private flags, asked only for rails
// on which lldpd heard nothing; `now` is the wall clock the ages are measured on.
std::vector<RailNeighbors> ReadRailNeighbors(const std::vector<Rail>& rails,
                                             const lldp::Neighbors& lldpd,
                                             const nic::StatisticsSource& nic, base::WallTime now);

}  // namespace rail::inventory
