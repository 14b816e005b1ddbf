// Helpers shared by the check families in src/health. Each family appends its verdicts; the
// order is fixed afterwards by EvaluateChecks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rail/gpu/driver.h"
#include "rail/health/checks.h"

namespace rail::health::detail {

// One check family each (one file each).
void CheckPorts(const HealthInputs& inputs, std::vector<CheckResult>& out);  // port_active, _rate
void CheckRoceGids(const HealthInputs& inputs, std::vector<CheckResult>& out);  // roce_gid
void CheckSubnets(const HealthInputs& inputs, std::vector<CheckResult>& out);   // duplicate_subnet
void CheckMtus(const HealthInputs& inputs, std::vector<CheckResult>& out);      // mtu, peer_mtu
void CheckPeerVersions(const HealthInputs& inputs, std::vector<CheckResult>& out);  // peer_version
void CheckPeerHellos(const HealthInputs& inputs, std::vector<CheckResult>& out);    // peer_hello
void CheckCounters(const HealthInputs& inputs, std::vector<CheckResult>& out);  // counter_saturated
// multirail_striping, probe_throughput, transport_fallback
void CheckProbes(const HealthInputs& inputs, std::vector<CheckResult>& out);
void CheckPcieLinks(const HealthInputs& inputs, std::vector<CheckResult>& out);  // pcie_link
void CheckGpuNicAffinity(const HealthInputs& inputs,
                         std::vector<CheckResult>& out);                         // gpu_nic_affinity
void CheckGpuDirect(const HealthInputs& inputs, std::vector<CheckResult>& out);  // gpu_direct
void CheckGpuMemoryThroughput(const HealthInputs& inputs,
                              std::vector<CheckResult>& out);  // gpu_memory_throughput
// Judged on counter deltas over thresholds.fabric_window (inputs.history).
void CheckPfcStorms(const HealthInputs& inputs, std::vector<CheckResult>& out);  // pfc_storm
void CheckPfcPause(const HealthInputs& inputs, std::vector<CheckResult>& out);   // pfc_pause
void CheckRoceCongestionControl(const HealthInputs& inputs,
                                std::vector<CheckResult>& out);  // roce_congestion_control
void CheckRoceDrops(const HealthInputs& inputs, std::vector<CheckResult>& out);    // roce_drops
void CheckGlobalPause(const HealthInputs& inputs, std::vector<CheckResult>& out);  // global_pause
void CheckRoceRetransmissions(const HealthInputs& inputs,
                              std::vector<CheckResult>& out);  // roce_retransmissions
void CheckPortDiscards(const HealthInputs& inputs, std::vector<CheckResult>& out);  // port_discards
void CheckHostReceiveStarvation(const HealthInputs& inputs,
                                std::vector<CheckResult>& out);  // host_receive_starvation
void CheckLinkFlaps(const HealthInputs& inputs, std::vector<CheckResult>& out);   // link_flaps
void CheckLinkErrors(const HealthInputs& inputs, std::vector<CheckResult>& out);  // link_errors
void CheckNicTemperature(const HealthInputs& inputs,
                         std::vector<CheckResult>& out);                         // nic_temperature
void CheckQosConfig(const HealthInputs& inputs, std::vector<CheckResult>& out);  // qos_config
void CheckProbeFailing(const HealthInputs& inputs, std::vector<CheckResult>& out);  // probe_failing
void CheckUcxDeviceQuirks(const HealthInputs& inputs,
                          std::vector<CheckResult>& out);  // ucx_device_quirk
void CheckRailCabling(const HealthInputs& inputs, std::vector<CheckResult>& out);  // rail_cabling

// What the fabric checks' rules find in the fabric evidence of `run` on `rail`
// (probe_diagnosis.cc).
struct RunFindings {
  bool read = false;                // the rail's counters were read at both ends of the run
  std::vector<std::string> faults;  // for people, one per fault
  std::vector<std::string> judged;  // the rules that had counters to judge
};
RunFindings FindRunFaults(const HealthInputs& inputs, const probe::ProbeResult& run,
                          const std::string& rail);
// The same, for people: the faults, that there were none, or that nothing was read.
std::string RunDiagnosis(const HealthInputs& inputs, const probe::ProbeResult& run,
                         const std::string& rail);

// The rail's line rate in bytes per second (probe_checks.cc): the port's rate, else the configured
// expectation, else the netdev's speed for RDMA rails; nullopt when none is known.
std::optional<double> LineRate(const HealthInputs& inputs, const std::string& rail_name);

// A verdict: failing when `reason` is not empty.
CheckResult Verdict(std::string check, std::string rail, std::string peer, std::string reason);
// A check that could not judge, and why (CheckResult::held_back).
CheckResult HeldBack(std::string check, std::string rail, std::string peer, std::string reason);

// The inputs' vectors; a null pointer reads as empty.
const std::vector<inventory::Rail>& Rails(const HealthInputs& inputs);
const std::vector<probe::SeriesState>& Series(const HealthInputs& inputs);
const std::vector<InterfaceAddress>& Addresses(const HealthInputs& inputs);

// The rail's RDMA port, or nullptr (netdev-only rail, or the port is missing).
const sysfs::InfinibandPort* FindPort(const HealthInputs& inputs, const inventory::Rail& rail);
// class/net/<name> as read, or nullptr.
const sysfs::NetDevice* FindNetDevice(const HealthInputs& inputs, const std::string& name);

// The inputs' PCIe topology; a null pointer reads as empty.
const inventory::PcieTopology& Topology(const HealthInputs& inputs);
// What the driver says about the GPU at `pci_bus_id`, or nullptr (no capabilities yet, or the
// driver does not show it).
const gpu::CudaDevice* FindCudaDevice(const HealthInputs& inputs, const std::string& pci_bus_id);
// A GPU on its own PCIe link (attach pcie, and not integrated as far as the driver says): the
// only kind GPUDirect RDMA and the GPU<->NIC path apply to.
bool IsDiscrete(const HealthInputs& inputs, const inventory::Gpu& gpu);

// The latest result of each peer that reported its versions (any kind, current or not), by peer.
std::vector<const probe::ProbeResult*> LatestPerPeer(const HealthInputs& inputs);

// "a, b, c".
std::string Join(const std::vector<std::string>& items, const char* separator = ", ");
// Bytes per second as "8.1 Gbit/s".
std::string Gbits(double bytes_per_second);

}  // namespace rail::health::detail
