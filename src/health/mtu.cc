// mtu and peer_mtu: the rails of a host, and the two ends of a rail, should agree on the MTU
// (class/net/<netdev>/mtu); RoCE uses the largest IB MTU that fits, so a smaller netdev MTU on one
// rail silently shrinks its packets, and a mismatch with the peer drops jumbo frames.
#include <spdlog/fmt/fmt.h>

#include <map>

#include "health/check_helpers.h"

namespace rail::health::detail {
namespace {

std::optional<std::uint64_t> RailMtu(const HealthInputs& inputs, const inventory::Rail& rail) {
  const auto* netdev = FindNetDevice(inputs, rail.netdev);
  if (netdev == nullptr) return std::nullopt;
  return netdev->mtu;
}

void CheckHostMtus(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  std::vector<std::pair<const inventory::Rail*, std::uint64_t>> mtus;
  std::map<std::uint64_t, std::size_t> votes;
  for (const auto& rail : Rails(inputs)) {
    if (const auto mtu = RailMtu(inputs, rail)) {
      mtus.emplace_back(&rail, *mtu);
      ++votes[*mtu];
    }
  }
  if (mtus.empty()) return;
  // The MTU most rails use is the reference; on a tie the larger one, since rails are set up for
  // jumbo frames and the smaller MTU is the one left at a default.
  std::uint64_t reference = 0;
  std::size_t most = 0;
  for (const auto& [mtu, count] : votes) {
    if (count >= most) {
      reference = mtu;
      most = count;
    }
  }
  for (const auto& [rail, mtu] : mtus) {
    std::string reason;
    if (mtu != reference) {
      std::vector<std::string> others;
      for (const auto& [other, other_mtu] : mtus) {
        if (other_mtu == reference) others.push_back(other->name);
      }
      reason = fmt::format("MTU {} on {} (class/net/{}/mtu), while {} use {}", mtu, rail->netdev,
                           rail->netdev, Join(others), reference);
    }
    out.push_back(Verdict("mtu", rail->name, "", std::move(reason)));
  }
}

void CheckPeerMtus(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto* result : LatestPerPeer(inputs)) {
    if (result->peer_rail_mtus.empty()) continue;  // the peer does not report them
    for (const auto& rail : Rails(inputs)) {
      const auto mtu = RailMtu(inputs, rail);
      const auto theirs = result->peer_rail_mtus.find(rail.name);
      if (!mtu || theirs == result->peer_rail_mtus.end()) continue;
      out.push_back(Verdict("peer_mtu", rail.name, result->peer,
                            *mtu == theirs->second
                                ? std::string()
                                : fmt::format("MTU {} on {} here, {} on the peer's rail {}", *mtu,
                                              rail.netdev, theirs->second, rail.name)));
    }
  }
}

}  // namespace

void CheckMtus(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckHostMtus(inputs, out);
  CheckPeerMtus(inputs, out);
}

}  // namespace rail::health::detail
