// Helpers shared by the check families in src/health. Each family appends its verdicts; the
// order is fixed afterwards by EvaluateChecks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rail/health/checks.h"

namespace rail::health::detail {

// One check family each (one file each).
void CheckPorts(const HealthInputs& inputs, std::vector<CheckResult>& out);  // port_active, _rate
void CheckRoceGids(const HealthInputs& inputs, std::vector<CheckResult>& out);  // roce_gid
void CheckSubnets(const HealthInputs& inputs, std::vector<CheckResult>& out);   // duplicate_subnet
void CheckMtus(const HealthInputs& inputs, std::vector<CheckResult>& out);      // mtu, peer_mtu
void CheckPeerVersions(const HealthInputs& inputs, std::vector<CheckResult>& out);  // peer_version
void CheckCounters(const HealthInputs& inputs, std::vector<CheckResult>& out);  // counter_saturated
// multirail_striping, probe_throughput, transport_fallback
void CheckProbes(const HealthInputs& inputs, std::vector<CheckResult>& out);

// A verdict: failing when `reason` is not empty.
CheckResult Verdict(std::string check, std::string rail, std::string peer, std::string reason);

// The inputs' vectors; a null pointer reads as empty.
const std::vector<inventory::Rail>& Rails(const HealthInputs& inputs);
const std::vector<probe::SeriesState>& Series(const HealthInputs& inputs);
const std::vector<InterfaceAddress>& Addresses(const HealthInputs& inputs);

// The rail's RDMA port, or nullptr (netdev-only rail, or the port is missing).
const sysfs::InfinibandPort* FindPort(const HealthInputs& inputs, const inventory::Rail& rail);
// class/net/<name> as read, or nullptr.
const sysfs::NetDevice* FindNetDevice(const HealthInputs& inputs, const std::string& name);

// The latest result of each peer that reported its versions (any kind, current or not), by peer.
std::vector<const probe::ProbeResult*> LatestPerPeer(const HealthInputs& inputs);

// "a, b, c".
std::string Join(const std::vector<std::string>& items, const char* separator = ", ");
// Bytes per second as "8.1 Gbit/s".
std::string Gbits(double bytes_per_second);

}  // namespace rail::health::detail
