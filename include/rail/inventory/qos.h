// A rail's QoS configuration: what its netdev's driver reports through DCB netlink, and its RoCE
// ECN enablement where the driver exposes that in sysfs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rail/inventory/rails.h"
#include "rail/nic/dcb.h"
#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/read_errors.h"
#include "rail/sysfs/roce_ecn.h"

namespace rail::inventory {

struct RailQos {
  std::string rail;
  std::string netdev;
  nic::DcbConfig dcb;
  std::optional<sysfs::RoceEcn> ecn;  // absent: the driver does not expose ECN in sysfs
};

// One entry per rail with a netdev that is not InfiniBand (DCB is an Ethernet matter), in the
// rails' order.
std::vector<RailQos> ReadRailQos(const std::vector<Rail>& rails, const nic::DcbReader& dcb,
                                 const sysfs::Filesystem& sys, sysfs::ReadErrors& errors);

// The entry of `rail`, or nullptr.
const RailQos* FindRailQos(const std::vector<RailQos>& qos, const std::string& rail);

}  // namespace rail::inventory
