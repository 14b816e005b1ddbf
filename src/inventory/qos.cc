#include "rail/inventory/qos.h"

#include <algorithm>

namespace rail::inventory {

std::vector<RailQos> ReadRailQos(const std::vector<Rail>& rails, const nic::DcbReader& dcb,
                                 const sysfs::Filesystem& sys, sysfs::ReadErrors& errors) {
  std::vector<RailQos> out;
  for (const auto& rail : rails) {
    if (rail.netdev.empty() || rail.link_layer == "InfiniBand") continue;
    RailQos qos;
    qos.rail = rail.name;
    qos.netdev = rail.netdev;
    qos.dcb = dcb.Read(rail.netdev);
    qos.ecn = sysfs::ReadRoceEcn(sys, rail.netdev, errors);
    out.push_back(std::move(qos));
  }
  return out;
}

const RailQos* FindRailQos(const std::vector<RailQos>& qos, const std::string& rail) {
  const auto found = std::find_if(qos.begin(), qos.end(),
                                  [&](const RailQos& entry) { return entry.rail == rail; });
  return found == qos.end() ? nullptr : &*found;
}

}  // namespace rail::inventory
