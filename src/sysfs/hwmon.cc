#include "rail/sysfs/hwmon.h"

#include <algorithm>
#include <charconv>

#include "rail/sysfs/pci.h"
#include "rail/sysfs/values.h"
#include "sysfs/read_file.h"

namespace rail::sysfs {
namespace {

using detail::JoinPath;
using detail::Presence;

constexpr std::string_view kHwmonClassDir = "class/hwmon";

std::optional<double> ParseMillidegrees(std::string_view text) {
  const auto value = ParseSigned(text);
  if (!value) return std::nullopt;
  return static_cast<double>(*value) / 1000.0;
}

// The sensor number of "temp<n>_input", or 0.
unsigned TemperatureInput(std::string_view file) {
  constexpr std::string_view kPrefix = "temp";
  constexpr std::string_view kSuffix = "_input";
  if (!file.starts_with(kPrefix) || !file.ends_with(kSuffix)) return 0;
  const auto digits = file.substr(kPrefix.size(), file.size() - kPrefix.size() - kSuffix.size());
  unsigned number = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  return error == std::errc() && end == digits.data() + digits.size() ? number : 0;
}

HwmonDevice ReadHwmon(const Filesystem& sys, const std::string& dir, std::string name,
                      std::string pci_address, ReadErrors& errors) {
  HwmonDevice device{std::move(name), {}, std::move(pci_address), {}};
  device.chip = detail::ReadString(sys, JoinPath(dir, "name"), errors, Presence::kOptional);
  std::vector<unsigned> sensors;
  for (const auto& file : detail::ListNames(sys, dir, errors, Presence::kOptional)) {
    if (const unsigned number = TemperatureInput(file)) sensors.push_back(number);
  }
  std::sort(sensors.begin(), sensors.end());
  for (const unsigned number : sensors) {
    HwmonTemperature temperature;
    temperature.sensor = "temp" + std::to_string(number);
    const std::string base = JoinPath(dir, temperature.sensor);
    temperature.celsius =
        detail::ReadParsed(sys, base + "_input", errors, Presence::kOptional, ParseMillidegrees);
    temperature.critical_celsius =
        detail::ReadParsed(sys, base + "_crit", errors, Presence::kOptional, ParseMillidegrees);
    temperature.label = detail::ReadString(sys, base + "_label", errors, Presence::kOptional);
    device.temperatures.push_back(std::move(temperature));
  }
  return device;
}

}  // namespace

std::vector<HwmonDevice> ReadPciHwmons(const Filesystem& sys, ReadErrors& errors,
                                       const std::function<bool(const std::string&)>& want) {
  std::vector<HwmonDevice> devices;
  const std::string class_dir(kHwmonClassDir);
  for (auto& name : detail::ListNames(sys, class_dir, errors, Presence::kOptional)) {
    const std::string dir = JoinPath(class_dir, name);
    auto address = ResolvedPciAddress(sys, dir + "/device");
    if (!address || !want(*address)) continue;
    devices.push_back(ReadHwmon(sys, dir, std::move(name), std::move(*address), errors));
  }
  return devices;
}

}  // namespace rail::sysfs
