// ucx_device_quirk: a rail whose RDMA device has a known fault with our UCX version
// (probe/ucx_quirks.h holds the rule: which versions, which driver). Judged from the inventory,
// not from probes, so it stays failing while this agent's probe worker runs with the workaround
// (ucx_device_quirk_workaround): NCCL, MPI and every other UCX process on the host still need
// the setting. A rail whose probes failed with the quirk's signature names UCX's line too.
#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "health/check_helpers.h"
#include "rail/probe/ucx_quirks.h"
#include "rail/probe/worker.h"

namespace rail::health::detail {
namespace {

const sysfs::InfinibandDevice* FindDevice(const HealthInputs& inputs, const std::string& name) {
  if (inputs.devices == nullptr) return nullptr;
  const auto found = std::find_if(inputs.devices->begin(), inputs.devices->end(),
                                  [&](const auto& device) { return device.name == name; });
  return found == inputs.devices->end() ? nullptr : &*found;
}

// What the rail's failing probes said, when it is the quirk's signature: "; probes of peer b
// over rail0 fail so: ...".
std::string Evidence(const HealthInputs& inputs, const std::string& rail) {
  std::vector<std::string> seen;
  for (const auto& state : Series(inputs)) {
    const auto& rails = state.last.rails;
    if (state.consecutive_failures == 0 ||
        std::find(rails.begin(), rails.end(), rail) == rails.end())
      continue;
    if (!probe::ShowsRxeUdQuirk(state.last_failure_message)) continue;
    seen.push_back(fmt::format("{} of peer {} fails so: {}", state.key.kind, state.key.peer,
                               state.last_failure_message));
  }
  return seen.empty() ? std::string() : "; " + Join(seen, "; ");
}

}  // namespace

void CheckUcxDeviceQuirks(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  const std::string& version = inputs.own_ucx_version;
  if (version.empty() || version == probe::kUnknownUcxVersion) return;  // nothing to judge by
  for (const auto& rail : Rails(inputs)) {
    const auto* device = rail.device.empty() ? nullptr : FindDevice(inputs, rail.device);
    // Only the devices a quirk is known for get a verdict.
    if (device == nullptr || !probe::IsSoftRoce(*device)) continue;
    const auto quirk = probe::FindUcxDeviceQuirk(*device, rail.roce_v2_gid_index, version);
    out.push_back(Verdict("ucx_device_quirk", rail.name, "",
                          quirk ? quirk->Describe() + Evidence(inputs, rail.name) : ""));
  }
}

}  // namespace rail::health::detail
