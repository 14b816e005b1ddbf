// What a verdict rests on, for people: the files or probe runs each check reads, with the rail's
// device, port, netdev and PCI address filled in. One table beside the remedies (remedies.h), so
// that `rail_exporter doctor` and whatever else shows a verdict name the same evidence.
#pragma once

#include <string>
#include <vector>

#include "rail/health/checks.h"
#include "rail/inventory/pcie_topology.h"
#include "rail/inventory/rails.h"

namespace rail::health {

// Files of a rail's RDMA port: "sysfs class/infiniband/<device>/ports/<port>/<files>"; the
// class folder alone without a rail or a device.
std::string PortEvidence(const inventory::Rail* rail, const std::string& files);

// The evidence of `verdict`; "the probe results" for the checks that judge probe runs.
std::string Evidence(const CheckResult& verdict, const std::vector<inventory::Rail>& rails,
                     const inventory::PcieTopology& topology);

}  // namespace rail::health
