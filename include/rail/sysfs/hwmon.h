// Temperatures of devices under class/hwmon/: the NIC's own hwmon device (mlx5 registers one on
// kernels newer than Debian 12's 6.1) is found by where its `device` link resolves.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/read_errors.h"

namespace rail::sysfs {

struct HwmonTemperature {
  std::string sensor;                      // "temp1" of temp1_input
  std::optional<std::string> label;        // temp<n>_label ("asic", "Module 0")
  std::optional<double> celsius;           // temp<n>_input, millidegrees
  std::optional<double> critical_celsius;  // temp<n>_crit, millidegrees
};

struct HwmonDevice {
  std::string name;                            // class/hwmon/<name> ("hwmon3")
  std::optional<std::string> chip;             // name ("mlx5")
  std::string pci_address;                     // where device resolves ("0000:01:00.0")
  std::vector<HwmonTemperature> temperatures;  // by sensor number
};

// Every hwmon device whose `device` resolves to a PCI function `want` accepts, with its
// temperature sensors; the others are not read beyond that link. No class/hwmon is no error.
std::vector<HwmonDevice> ReadPciHwmons(const Filesystem& sys, ReadErrors& errors,
                                       const std::function<bool(const std::string&)>& want);

}  // namespace rail::sysfs
