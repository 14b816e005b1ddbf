// RoCE ECN enablement per priority, where a driver exposes it in sysfs: MLNX_OFED's mlx5 has
// class/net/<netdev>/ecn/roce_np/enable/<priority> (the notification point: the receiver sends
// CNPs for ECN-marked packets) and ecn/roce_rp/enable/<priority> (the reaction point: the sender
// slows down on CNPs). The in-box mlx5 driver has neither; its ECN settings are not in sysfs.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/read_errors.h"

namespace rail::sysfs {

struct RoceEcn {
  // Per priority; nullopt where the file is missing or does not parse.
  std::array<std::optional<bool>, 8> notification_point;  // ecn/roce_np/enable/<p>
  std::array<std::optional<bool>, 8> reaction_point;      // ecn/roce_rp/enable/<p>
};

// Nullopt when class/net/<netdev>/ecn/ does not exist (the driver does not expose ECN).
std::optional<RoceEcn> ReadRoceEcn(const Filesystem& sys, const std::string& netdev,
                                   ReadErrors& errors);

}  // namespace rail::sysfs
