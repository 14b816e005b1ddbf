#include "probe/ucx/rail_lanes.h"

#include <algorithm>

namespace rail::probe::detail {

bool IsRdmaTransport(std::string_view transport) {
  for (std::string_view family : {"rc", "dc", "ud", "gga", "ugni"}) {
    if (transport == family) return true;
    if (transport.size() > family.size() && transport.starts_with(family) &&
        transport[family.size()] == '_') {
      return true;
    }
  }
  return false;
}

std::vector<TransportLane> MapLanes(const std::vector<std::pair<std::string, std::string>>& pairs,
                                    const std::vector<ProbeRail>& rails) {
  std::vector<TransportLane> lanes;
  // Not a structured binding: clang 14 (the fuzz build's) cannot capture one in a lambda.
  for (const auto& pair : pairs) {
    const std::string& device = pair.second;
    TransportLane lane{pair.first, device, ""};
    auto owner = std::find_if(rails.begin(), rails.end(),
                              [&](const ProbeRail& rail) { return rail.ucx_device == device; });
    if (owner == rails.end()) {
      owner = std::find_if(rails.begin(), rails.end(), [&](const ProbeRail& rail) {
        return !rail.netdev.empty() && rail.netdev == device;
      });
    }
    if (owner != rails.end()) lane.rail = owner->name;
    lanes.push_back(std::move(lane));
  }
  return lanes;
}

void AddFallbackRails(const std::vector<TransportLane>& lanes, const std::vector<ProbeRail>& rails,
                      ProbeResult* result) {
  const std::vector<std::string>& fallen = result->fallback_rails;
  for (const ProbeRail& rail : rails) {
    if (!rail.expect_rdma || std::find(fallen.begin(), fallen.end(), rail.name) != fallen.end()) {
      continue;
    }
    const bool fell_back = std::any_of(lanes.begin(), lanes.end(), [&](const TransportLane& lane) {
      return (lane.rail == rail.name || lane.rail.empty()) && !IsRdmaTransport(lane.transport);
    });
    if (fell_back) result->fallback_rails.push_back(rail.name);
  }
}

}  // namespace rail::probe::detail
