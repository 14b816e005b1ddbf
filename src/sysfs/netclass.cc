#include "rail/sysfs/netclass.h"

#include <utility>

#include "rail/sysfs/values.h"
#include "sysfs/read_file.h"

namespace rail::sysfs {
namespace {

using detail::JoinPath;
using detail::Presence;

constexpr std::string_view kNetClassDir = "class/net";

std::optional<bool> ParseCarrier(std::string_view text) {
  auto value = ParseUnsigned(text);
  if (!value || *value > 1) return std::nullopt;
  return *value == 1;
}

void ReadLinkAttributes(const Filesystem& sys, const std::string& dir, NetDevice& device,
                        ReadErrors& errors) {
  device.operstate =
      detail::ReadString(sys, JoinPath(dir, "operstate"), errors, Presence::kOptional);
  // carrier and speed answer EINVAL while the interface is down: the value is unknown then, which
  // is not a read failure.
  device.carrier = detail::ReadParsed(sys, JoinPath(dir, "carrier"), errors,
                                      Presence::kUnknownWhenDown, ParseCarrier);
  device.mtu =
      detail::ReadParsed(sys, JoinPath(dir, "mtu"), errors, Presence::kOptional, ParseUnsigned);
  device.speed_mbps = detail::ReadParsed(sys, JoinPath(dir, "speed"), errors,
                                         Presence::kUnknownWhenDown, ParseSigned);
  device.address = detail::ReadString(sys, JoinPath(dir, "address"), errors, Presence::kOptional);
  device.type =
      detail::ReadParsed(sys, JoinPath(dir, "type"), errors, Presence::kOptional, ParseUnsigned);

  device.carrier_changes = detail::ReadParsed(sys, JoinPath(dir, "carrier_changes"), errors,
                                              Presence::kOptional, ParseUnsigned);
  device.carrier_up_count = detail::ReadParsed(sys, JoinPath(dir, "carrier_up_count"), errors,
                                               Presence::kOptional, ParseUnsigned);
}

}  // namespace

std::vector<std::string> ListNetDevices(const Filesystem& sys, ReadErrors& errors) {
  std::vector<std::string> devices;
  const std::string class_dir(kNetClassDir);
  for (std::string& name : detail::ListNames(sys, class_dir, errors, Presence::kOptional)) {
    // class/net also holds the plain file bonding_masters when the bonding module is loaded;
    // interfaces are directories (symlinks to them on a real kernel).
    if (name == "bonding_masters" || !sys.IsDirectory(JoinPath(class_dir, name))) continue;
    devices.push_back(std::move(name));
  }
  return devices;
}

std::optional<NetDevice> ReadNetDevice(const Filesystem& sys, const std::string& name,
                                       ReadErrors& errors, const NetDeviceReadOptions& options) {
  const std::string dir = JoinPath(kNetClassDir, name);
  if (!sys.IsDirectory(dir)) return std::nullopt;

  NetDevice device;
  device.name = name;
  if (options.link_attributes) ReadLinkAttributes(sys, dir, device, errors);
  device.carrier_down_count = detail::ReadParsed(sys, JoinPath(dir, "carrier_down_count"), errors,
                                                 Presence::kOptional, ParseUnsigned);

  if (!options.statistics) return device;
  const std::string stats_dir = JoinPath(dir, "statistics");
  for (const std::string& stat :
       detail::ListAttributeNames(sys, stats_dir, errors, Presence::kOptional)) {
    auto value = detail::ReadParsed(sys, JoinPath(stats_dir, stat), errors, Presence::kOptional,
                                    ParseUnsigned);
    if (value) device.statistics.emplace(stat, *value);
  }
  return device;
}

// device/driver links to bus/<bus>/drivers/<driver>: the link's own target names it.
std::optional<std::string> NetDeviceDriver(const Filesystem& sys, const std::string& name) {
  std::string driver;
  if (sys.LinkTargetName(JoinPath(kNetClassDir, name) + "/device/driver", &driver) != 0) {
    return std::nullopt;
  }
  return driver;
}

}  // namespace rail::sysfs
