// qos_config: lossless RoCE needs PFC on the RoCE priority (health.roce_priority), and the rails
// of one host should classify and pause alike (PFC priorities, trust, DSCP map, as DCB netlink
// reports them): a rail configured differently from its siblings pauses, or drops, differently.
// A netdev without DCB gives no verdict, never a pass: nothing says its traffic is lossless.
#include <spdlog/fmt/fmt.h>

#include <map>

#include "health/check_helpers.h"

namespace rail::health {
namespace detail {
namespace {

// What must agree between the rails of a host.
struct QosSignature {
  std::uint8_t pfc_enabled = 0;
  nic::Trust trust = nic::Trust::kPcp;
  std::vector<nic::DscpMapping> dscp_map;
  auto operator<=>(const QosSignature&) const = default;
};

QosSignature SignatureOf(const inventory::RailQos& qos) {
  return {qos.dcb.pfc->enabled, qos.dcb.trust(), qos.dcb.dscp_map};
}

// "3", "3,4" or "none".
std::string PfcPriorities(std::uint8_t enabled) {
  nic::PfcConfig pfc;
  pfc.enabled = enabled;
  return pfc.EnabledText();
}

std::string DscpDifferences(const QosSignature& here, const QosSignature& there) {
  std::map<unsigned, std::pair<std::string, std::string>> differences;
  for (const auto& entry : here.dscp_map)
    differences[entry.dscp].first = std::to_string(entry.priority);
  for (const auto& entry : there.dscp_map)
    differences[entry.dscp].second = std::to_string(entry.priority);
  std::vector<std::string> parts;
  std::size_t more = 0;
  for (const auto& [dscp, priorities] : differences) {
    if (priorities.first == priorities.second) continue;
    if (parts.size() == 4) {
      ++more;
      continue;
    }
    parts.push_back(fmt::format("DSCP {} to priority {} here, {} there", dscp,
                                priorities.first.empty() ? "none" : priorities.first,
                                priorities.second.empty() ? "none" : priorities.second));
  }
  if (more > 0) parts.push_back(fmt::format("{} more DSCP values", more));
  return Join(parts, ", ");
}

std::string Differences(const QosSignature& here, const QosSignature& there) {
  std::vector<std::string> parts;
  if (here.pfc_enabled != there.pfc_enabled) {
    parts.push_back(fmt::format("PFC on priorities {} here, {} there",
                                PfcPriorities(here.pfc_enabled), PfcPriorities(there.pfc_enabled)));
  }
  if (here.trust != there.trust) {
    parts.push_back(fmt::format("trust {} here, {} there", nic::TrustName(here.trust),
                                nic::TrustName(there.trust)));
  }
  if (here.dscp_map != there.dscp_map) parts.push_back(DscpDifferences(here, there));
  return Join(parts, "; ");
}

std::string PfcOffReason(const inventory::RailQos& qos, unsigned roce_priority) {
  if (qos.dcb.pfc->EnabledOn(roce_priority)) return "";
  return fmt::format(
      "PFC is off on the RoCE priority {} of {} (PFC on priorities {}; dcb pfc show dev {}): "
      "RoCE traffic there is not lossless; dcb pfc set dev {} prio-pfc {}:on",
      roce_priority, qos.netdev, qos.dcb.pfc->EnabledText(), qos.netdev, qos.netdev, roce_priority);
}

// The rails whose configuration differs from the one most rails share (every rail when no one
// configuration has more rails than any other), each with the rails it differs from.
std::map<std::string, std::string> DifferingRails(
    const std::vector<const inventory::RailQos*>& judged) {
  std::map<QosSignature, std::vector<const inventory::RailQos*>> groups;
  for (const auto* qos : judged) groups[SignatureOf(*qos)].push_back(qos);
  std::map<std::string, std::string> reasons;
  if (groups.size() < 2) return reasons;
  std::size_t most = 0;
  std::size_t ties = 0;
  for (const auto& [signature, members] : groups) {
    if (members.size() > most) {
      most = members.size();
      ties = 0;
    }
    if (members.size() == most) ++ties;
  }
  for (const auto* qos : judged) {
    const auto here = SignatureOf(*qos);
    if (ties == 1 && groups[here].size() == most) continue;  // the majority's configuration
    for (const auto& [there, members] : groups) {
      if (there == here || (ties == 1 && members.size() != most)) continue;
      std::vector<std::string> names;
      for (const auto* member : members) names.push_back(member->rail);
      reasons[qos->rail] = fmt::format(
          "{} is configured unlike rail {}: {} (compare dcb pfc show and dcb app show on each)",
          qos->netdev, Join(names), Differences(here, there));
      break;
    }
  }
  return reasons;
}

// 802.3x pause on the rail's netdevs (`ethtool -a`): it stops every priority, RoCE's and the rest,
// whenever the NIC or its switch pauses; a RoCE rail uses PFC instead.
std::string GlobalPauseReason(const HealthInputs& inputs, const std::string& rail) {
  std::vector<std::string> on;
  if (inputs.fabric == nullptr) return "";
  for (const auto& [name, reading] : *inputs.fabric) {
    if (name != rail || !reading.pause || !(reading.pause->rx || reading.pause->tx)) continue;
    on.push_back(fmt::format("{} (rx {}, tx {})", reading.netdev, reading.pause->rx ? "on" : "off",
                             reading.pause->tx ? "on" : "off"));
  }
  if (on.empty()) return "";
  return fmt::format(
      "802.3x pause is on on {}: it stops every priority of the link; turn it off (ethtool -a "
      "shows it, ethtool -A <netdev> rx off tx off) and use PFC on the RoCE priority",
      Join(on));
}

}  // namespace

void CheckQosConfig(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  if (inputs.qos == nullptr) return;
  std::vector<const inventory::RailQos*> judged;
  for (const auto& qos : *inputs.qos) {
    if (QosConfigUnjudged(qos).empty()) judged.push_back(&qos);
  }
  const auto differing = DifferingRails(judged);
  for (const auto* qos : judged) {
    std::vector<std::string> reasons;
    if (auto off = PfcOffReason(*qos, inputs.thresholds.roce_priority); !off.empty()) {
      reasons.push_back(std::move(off));
    }
    if (const auto found = differing.find(qos->rail); found != differing.end()) {
      reasons.push_back(found->second);
    }
    if (auto pause = GlobalPauseReason(inputs, qos->rail); !pause.empty()) {
      reasons.push_back(std::move(pause));
    }
    out.push_back(Verdict("qos_config", qos->rail, "", Join(reasons, "; ")));
  }
}

}  // namespace detail

std::string QosConfigUnjudged(const inventory::RailQos& qos) {
  if (qos.dcb.state != nic::DcbState::kAvailable) {
    return fmt::format(
        "no DCB on {}: {}; PFC and trust are unknown, so RoCE there is not known "
        "to be lossless",
        qos.netdev, qos.dcb.error);
  }
  if (!qos.dcb.pfc) {
    return fmt::format("the driver of {} reports no IEEE PFC configuration (dcb pfc show dev {})",
                       qos.netdev, qos.netdev);
  }
  return "";
}

}  // namespace rail::health
