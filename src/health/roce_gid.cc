// roce_gid: a RoCE rail needs a RoCE v2 GID carrying its netdev's IPv4 address (what UCX and
// rdma_cm resolve), and its GIDs must not name a bond: enslaving RoCE netdevs to a bond breaks
// RDMA memory registration and steers every queue pair through one port.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <set>

#include "health/check_helpers.h"

namespace rail::health::detail {
namespace {

// The addresses the rail should be reachable at: its netdev's IPv4 addresses, else the rail's
// own (configured, or taken from its GIDs).
std::vector<std::string> ExpectedAddresses(const HealthInputs& inputs,
                                           const inventory::Rail& rail) {
  std::vector<std::string> addresses;
  for (const auto& address : Addresses(inputs)) {
    if (!rail.netdev.empty() && address.ifname == rail.netdev) {
      addresses.push_back(address.address);
    }
  }
  if (addresses.empty() && !rail.ipv4.empty()) addresses.push_back(rail.ipv4);
  return addresses;
}

std::string Reason(const HealthInputs& inputs, const inventory::Rail& rail,
                   const sysfs::InfinibandPort& port) {
  std::set<std::string> bond_names;
  if (inputs.bonds != nullptr) {
    for (const auto& bond : *inputs.bonds) bond_names.insert(bond.name);
  }
  std::set<std::string> bonded;
  for (const auto& entry : port.gids) {
    if (entry.netdev && bond_names.contains(*entry.netdev)) bonded.insert(*entry.netdev);
  }
  if (!bonded.empty()) {
    return fmt::format(
        "GIDs of {} port {} name the bond {} (gid_attrs/ndevs): RoCE netdevs enslaved to a bond "
        "break RDMA memory registration; give each port its own netdev and address",
        rail.device, rail.port, Join({bonded.begin(), bonded.end()}));
  }

  const auto expected = ExpectedAddresses(inputs, rail);
  std::vector<std::string> carried;  // IPv4 addresses of the port's RoCE v2 GIDs on the netdev
  for (const auto& entry : port.gids) {
    if (entry.type != sysfs::GidType::kRoceV2) continue;
    if (!rail.netdev.empty() && entry.netdev && *entry.netdev != rail.netdev) continue;
    if (auto ipv4 = entry.gid.Ipv4()) carried.push_back(std::move(*ipv4));
  }
  const auto carries = [&](const std::string& address) {
    return std::find(carried.begin(), carried.end(), address) != carried.end();
  };
  if (expected.empty()) {
    return fmt::format(
        "no IPv4 address on netdev {} and no RoCE v2 IPv4 GID on {} port {}: RoCE v2 "
        "cannot reach the rail",
        rail.netdev.empty() ? "(none)" : rail.netdev, rail.device, rail.port);
  }
  if (std::any_of(expected.begin(), expected.end(), carries)) return {};
  return fmt::format("no RoCE v2 GID of {} port {} carries {} (the IPv4 address of {}); {}",
                     rail.device, rail.port, Join(expected),
                     rail.netdev.empty() ? "the rail" : rail.netdev,
                     carried.empty() ? std::string("it has no RoCE v2 IPv4 GID at all")
                                     : "its RoCE v2 IPv4 GIDs carry " + Join(carried));
}

}  // namespace

void CheckRoceGids(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto& rail : Rails(inputs)) {
    // Only RoCE ports: InfiniBand ports address by LID, netdev-only rails have no GIDs.
    const auto* port = FindPort(inputs, rail);
    if (port == nullptr || !port->IsEthernet()) continue;
    out.push_back(Verdict("roce_gid", rail.name, "", Reason(inputs, rail, *port)));
  }
}

}  // namespace rail::health::detail
