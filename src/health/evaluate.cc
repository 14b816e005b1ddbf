// EvaluateChecks: every family, then one stable order (check token, rail, peer), so that the
// exposition, the landing page and the log all list verdicts alike.
#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "health/check_helpers.h"
#include "rail/gpu/gpudirect.h"
#include "rail/health/remedies.h"

namespace rail::health {
namespace detail {

CheckResult Verdict(std::string check, std::string rail, std::string peer, std::string reason) {
  CheckResult result;
  result.check = std::move(check);
  result.rail = std::move(rail);
  result.peer = std::move(peer);
  result.ok = reason.empty();
  result.reason = std::move(reason);
  return result;
}

CheckResult HeldBack(std::string check, std::string rail, std::string peer, std::string reason) {
  CheckResult result = Verdict(std::move(check), std::move(rail), std::move(peer), "");
  result.held_back = true;
  result.reason = std::move(reason);
  return result;
}

const std::vector<inventory::Rail>& Rails(const HealthInputs& inputs) {
  static const std::vector<inventory::Rail> kNone;
  return inputs.rails ? *inputs.rails : kNone;
}

const std::vector<probe::SeriesState>& Series(const HealthInputs& inputs) {
  static const std::vector<probe::SeriesState> kNone;
  return inputs.probe_series ? *inputs.probe_series : kNone;
}

const std::vector<InterfaceAddress>& Addresses(const HealthInputs& inputs) {
  static const std::vector<InterfaceAddress> kNone;
  return inputs.addresses ? *inputs.addresses : kNone;
}

const sysfs::InfinibandPort* FindPort(const HealthInputs& inputs, const inventory::Rail& rail) {
  return inputs.devices ? inventory::FindRailPort(*inputs.devices, rail) : nullptr;
}

const sysfs::NetDevice* FindNetDevice(const HealthInputs& inputs, const std::string& name) {
  return inputs.net_devices ? inventory::FindNetDevice(*inputs.net_devices, name) : nullptr;
}

std::vector<const probe::ProbeResult*> LatestPerPeer(const HealthInputs& inputs) {
  std::map<std::string, const probe::ProbeResult*> latest;
  for (const auto& state : Series(inputs)) {
    const auto& result = state.last;
    if (result.peer_agent_version.empty()) continue;  // never got past the handshake
    auto& slot = latest[result.peer];
    if (slot == nullptr || result.finished_at > slot->finished_at) slot = &result;
  }
  std::vector<const probe::ProbeResult*> out;
  for (const auto& [peer, result] : latest) out.push_back(result);
  return out;
}

const inventory::PcieTopology& Topology(const HealthInputs& inputs) {
  static const inventory::PcieTopology kNone;
  return inputs.topology ? *inputs.topology : kNone;
}

const gpu::CudaDevice* FindCudaDevice(const HealthInputs& inputs, const std::string& pci_bus_id) {
  if (inputs.capabilities == nullptr) return nullptr;
  for (const auto& device : inputs.capabilities->cuda.devices) {
    if (device.pci_bus_id == pci_bus_id) return &device;
  }
  return nullptr;
}

bool IsDiscrete(const HealthInputs& inputs, const inventory::Gpu& gpu) {
  return !gpu::IsIntegrated(&gpu, FindCudaDevice(inputs, gpu.pci_bus_id));
}

std::string Join(const std::vector<std::string>& items, const char* separator) {
  return fmt::format("{}", fmt::join(items, separator));
}

std::string Gbits(double bytes_per_second) {
  return fmt::format("{:.3g} Gbit/s", bytes_per_second * 8 / 1e9);
}

}  // namespace detail

namespace {

// The order of the tokens in checks.h (CheckTokens).
std::size_t CheckRank(const std::string& check) {
  const auto& tokens = CheckTokens();
  return static_cast<std::size_t>(std::find(tokens.begin(), tokens.end(), check) - tokens.begin());
}

}  // namespace

std::vector<CheckResult> EvaluateChecks(const HealthInputs& inputs) {
  std::vector<CheckResult> results;
  detail::CheckPorts(inputs, results);
  detail::CheckRoceGids(inputs, results);
  detail::CheckSubnets(inputs, results);
  detail::CheckMtus(inputs, results);
  detail::CheckPeerVersions(inputs, results);
  detail::CheckPeerHellos(inputs, results);
  detail::CheckCounters(inputs, results);
  detail::CheckProbes(inputs, results);
  detail::CheckPcieLinks(inputs, results);
  detail::CheckGpuNicAffinity(inputs, results);
  detail::CheckGpuDirect(inputs, results);
  detail::CheckGpuMemoryThroughput(inputs, results);
  detail::CheckPfcStorms(inputs, results);
  detail::CheckPfcPause(inputs, results);
  detail::CheckRoceCongestionControl(inputs, results);
  detail::CheckRoceDrops(inputs, results);
  detail::CheckRoceRetransmissions(inputs, results);
  detail::CheckGlobalPause(inputs, results);
  detail::CheckPortDiscards(inputs, results);
  detail::CheckHostReceiveStarvation(inputs, results);
  detail::CheckLinkFlaps(inputs, results);
  detail::CheckLinkErrors(inputs, results);
  detail::CheckNicTemperature(inputs, results);
  detail::CheckQosConfig(inputs, results);
  detail::CheckProbeFailing(inputs, results);
  detail::CheckUcxDeviceQuirks(inputs, results);
  detail::CheckRailCabling(inputs, results);

  // Rails in the inputs' order (configured first), host-wide verdicts ("") before them, rails
  // only the probe results name after them.
  std::map<std::string, std::size_t> rail_rank = {{"", 0}};
  for (const auto& rail : detail::Rails(inputs)) rail_rank.emplace(rail.name, rail_rank.size());
  const auto rank = [&](const CheckResult& result) {
    const auto it = rail_rank.find(result.rail);
    return std::make_tuple(CheckRank(result.check),
                           it == rail_rank.end() ? rail_rank.size() : it->second, result.rail,
                           result.peer);
  };
  std::stable_sort(results.begin(), results.end(),
                   [&](const CheckResult& a, const CheckResult& b) { return rank(a) < rank(b); });
  return results;
}

}  // namespace rail::health
