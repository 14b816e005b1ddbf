// mtu and peer_mtu: the rails of a host, and the two ends of a rail, should agree on the MTU
// (class/net/<netdev>/mtu); RoCE uses the largest IB MTU that fits, so a smaller netdev MTU on one
// rail silently shrinks its packets, and a mismatch with the peer drops jumbo frames. On RoCE
// rails a mismatch also names both ends' active_mtu, which the netdev MTU decides.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
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

// Header bytes the kernel's RoCE core takes off the netdev MTU before choosing the IB MTU
// (iboe_get_mtu: GRH 40, UDP 8, BTH 12, XRC 4, AtomicETH 28, ICRC 4).
constexpr std::uint64_t kRoceHeaderBytes = 96;

// The RoCE port's active_mtu over a netdev of `netdev_mtu`: the largest IB MTU that fits (1500 ->
// 1024, 9000 -> 4096); 0 when none does. rxe takes off a few bytes fewer, which matters only
// within a few bytes of a boundary.
std::uint64_t RoceActiveMtu(std::uint64_t netdev_mtu) {
  if (netdev_mtu < kRoceHeaderBytes) return 0;
  for (const std::uint64_t ib_mtu : {4096, 2048, 1024, 512, 256}) {
    if (netdev_mtu - kRoceHeaderBytes >= ib_mtu) return ib_mtu;
  }
  return 0;
}

// A mismatch's reason; on a RoCE rail also the two active_mtus, which say whether RDMA suffers
// (the smaller one is the path's) or only TCP's jumbo frames do.
std::string PeerMtuMismatch(const inventory::Rail& rail, std::uint64_t mtu, std::uint64_t theirs) {
  std::string reason = fmt::format("MTU {} on {} here, {} on the peer's rail {}", mtu, rail.netdev,
                                   theirs, rail.name);
  if (rail.link_layer != "Ethernet" || rail.device.empty()) return reason;
  const std::uint64_t active = RoceActiveMtu(mtu);
  const std::uint64_t peer_active = RoceActiveMtu(theirs);
  if (active == peer_active) {
    return reason + fmt::format("; RoCE active_mtu {} on both ends: RDMA is not affected", active);
  }
  return reason + fmt::format(
                      "; RoCE active_mtu {} here, {} on the peer: RDMA between them runs "
                      "at {}",
                      active, peer_active, std::min(active, peer_active));
}

void CheckPeerMtus(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto* result : LatestPerPeer(inputs)) {
    if (result->peer_rail_mtus.empty()) continue;  // the peer does not report them
    for (const auto& rail : Rails(inputs)) {
      const auto mtu = RailMtu(inputs, rail);
      const auto theirs = result->peer_rail_mtus.find(rail.name);
      if (!mtu || theirs == result->peer_rail_mtus.end()) continue;
      out.push_back(Verdict(
          "peer_mtu", rail.name, result->peer,
          *mtu == theirs->second ? std::string() : PeerMtuMismatch(rail, *mtu, theirs->second)));
    }
  }
}

}  // namespace

void CheckMtus(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckHostMtus(inputs, out);
  CheckPeerMtus(inputs, out);
}

}  // namespace rail::health::detail
