#include "rail/inventory/neighbors.h"

#include <algorithm>
#include <chrono>

namespace rail::inventory {
namespace {

// ice names the flag so since Linux 5.4 (it was "disable-fw-lldp", then "enable-fw-lldp").
constexpr const char* kIceFirmwareLldpFlag = "fw-lldp-agent";

std::string Remedy(NeighborState state, const std::string& netdev) {
  switch (state) {
    case NeighborState::kNoLldpd:
      return "apt install lldpd && systemctl enable --now lldpd";
    case NeighborState::kLldpdError:
      return "adduser <the agent's user> _lldpd";
    case NeighborState::kFirmwareAgent:
      return "ethtool --set-priv-flags " + netdev + " " + kIceFirmwareLldpFlag + " off";
    default:
      return "";
  }
}

std::string Reason(NeighborState state, const Rail& rail, const lldp::Neighbors& lldpd) {
  switch (state) {
    case NeighborState::kAnnounced:
      return "lldpd heard the link partner on " + rail.netdev;
    case NeighborState::kNoNeighbor:
      return "lldpd runs on " + rail.netdev + " and heard no LLDP there within the last TTL";
    case NeighborState::kNotWatched:
      return "lldpd on " + lldpd.socket_path + " does not run on " + rail.netdev;
    case NeighborState::kNoLldpd:
    case NeighborState::kLldpdError:
      return lldpd.error;
    case NeighborState::kFirmwareAgent:
      return "the NIC's firmware runs its own LLDP agent on " + rail.netdev + " (private flag " +
             kIceFirmwareLldpFlag + " on) and takes the switch's frames" +
             (lldpd.state == lldp::DaemonState::kAnswered ? "" : "; " + lldpd.error);
    case NeighborState::kInfiniband:
      return "InfiniBand has no LLDP: the subnet manager's view (ibnetdiscover, smpquery "
             "nodedesc) shows the remote port";
    case NeighborState::kNoNetdev:
      return "the rail has no netdev";
  }
  return "";
}

double AgeSeconds(const lldp::Neighbor& neighbor, base::WallTime now) {
  const auto since_epoch = std::chrono::duration<double>(now.time_since_epoch()).count();
  return std::max(0.0, since_epoch - static_cast<double>(neighbor.last_change_epoch_seconds));
}

}  // namespace

const char* NeighborStateName(NeighborState state) {
  switch (state) {
    case NeighborState::kAnnounced:
      return "ok";
    case NeighborState::kNoNeighbor:
      return "no_neighbor";
    case NeighborState::kNotWatched:
      return "not_watched";
    case NeighborState::kNoLldpd:
      return "no_lldpd";
    case NeighborState::kLldpdError:
      return "lldpd_error";
    case NeighborState::kFirmwareAgent:
      return "firmware_lldp_agent";
    case NeighborState::kInfiniband:
      return "infiniband";
    case NeighborState::kNoNetdev:
      return "no_netdev";
  }
  return "no_neighbor";
}

NeighborState DecideNeighborState(const Rail& rail, const lldp::Neighbors& lldpd,
                                  std::optional<bool> firmware_agent) {
  if (rail.link_layer == "InfiniBand") return NeighborState::kInfiniband;
  if (rail.netdev.empty()) return NeighborState::kNoNetdev;
  // A firmware agent that takes the frames leaves lldpd nothing to hear whatever else is
  // wrong, and no neighbour lldpd lists can be stale: its TTL expires it.
  const auto heard = lldpd.interfaces.find(rail.netdev);
  if (lldpd.state == lldp::DaemonState::kAnswered && heard != lldpd.interfaces.end() &&
      !heard->second.empty()) {
    return NeighborState::kAnnounced;
  }
  if (firmware_agent.value_or(false)) return NeighborState::kFirmwareAgent;
  if (lldpd.state == lldp::DaemonState::kNotRunning) return NeighborState::kNoLldpd;
  if (lldpd.state == lldp::DaemonState::kError) return NeighborState::kLldpdError;
  if (heard == lldpd.interfaces.end()) return NeighborState::kNotWatched;
  return NeighborState::kNoNeighbor;
}

std::optional<bool> FirmwareLldpAgent(const nic::StatisticsSource& nic, const std::string& netdev) {
  const auto flags = nic.PrivateFlags(netdev);
  if (!flags) return std::nullopt;
  const auto flag = std::find_if(flags->begin(), flags->end(), [](const nic::PrivateFlag& f) {
    return f.name == kIceFirmwareLldpFlag;
  });
  if (flag == flags->end()) return std::nullopt;
  return flag->on;
}

std::vector<RailNeighbors> ReadRailNeighbors(const std::vector<Rail>& rails,
                                             const lldp::Neighbors& lldpd,
                                             const nic::StatisticsSource& nic, base::WallTime now) {
  std::vector<RailNeighbors> out;
  for (const auto& rail : rails) {
    RailNeighbors entry;
    entry.rail = rail.name;
    entry.netdev = rail.netdev;
    entry.state = DecideNeighborState(rail, lldpd, std::nullopt);
    // The private flags are asked only where lldpd heard nothing on an Ethernet netdev.
    if (entry.state != NeighborState::kAnnounced && entry.state != NeighborState::kInfiniband &&
        entry.state != NeighborState::kNoNetdev) {
      entry.state = DecideNeighborState(rail, lldpd, FirmwareLldpAgent(nic, rail.netdev));
    }
    entry.reason = Reason(entry.state, rail, lldpd);
    entry.remedy = Remedy(entry.state, rail.netdev);
    if (entry.state == NeighborState::kAnnounced) {
      for (const auto& neighbor : lldpd.interfaces.at(rail.netdev)) {
        entry.announcements.push_back({neighbor, AgeSeconds(neighbor, now)});
      }
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace rail::inventory
