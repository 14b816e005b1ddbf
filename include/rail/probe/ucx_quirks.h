// Known ways a UCX release fails on a kind of RDMA device, and what applications need to set to
// avoid them. The one place that knows which UCX versions and which drivers: the
// ucx_device_quirk check (health), doctor and the probe worker's workaround
// (ucx_device_quirk_workaround) all ask here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rail/sysfs/infiniband.h"

namespace rail::probe {

// UCX 1.13 on Soft-RoCE (rdma_rxe): with the IPv4-mapped RoCE v2 GID (index 1 on rxe), UD
// wire-up times out ("ud_ep.c:276 Fatal: UD endpoint ... unhandled timeout error") and closing
// the endpoint in that state asserts ("ucp_request.c:684 Assertion ... got REQ message"): every
// UCX process on the host aborts, the probe worker as much as NCCL or MPI.
struct UcxDeviceQuirk {
  std::string device;       // the RDMA device, "rxe0"
  std::string driver;       // "rxe (Soft-RoCE)"
  std::string ucx_version;  // ours, "1.13.1"
  unsigned gid_index = 0;   // the IPv4 RoCE v2 GID's index UCX picks by default
  // For people: what breaks, and the settings that avoid it.
  std::string Describe() const;
};

// The settings any UCX application on the host needs against the quirks, as "NAME=value": the
// first is what the probe worker gets with ucx_device_quirk_workaround.
const std::vector<std::string>& UcxQuirkSettings();

// Whether a probe's error message (worker_crashed, peer_worker_crashed: the worker's last fatal
// line) is what the rxe quirk makes UCX write.
bool ShowsRxeUdQuirk(const std::string& error_message);

// Whether `ucx_version` ("1.13.1") is one the rxe quirk applies to.
bool UcxVersionHasRxeUdQuirk(const std::string& ucx_version);

// A Soft-RoCE device: software (no PCI function, devices/virtual) and naming the netdev it runs
// over in its `parent` file, which only rxe has.
bool IsSoftRoce(const sysfs::InfinibandDevice& device);

// The quirk `device` has with `ucx_version` when UCX picks the IPv4 RoCE v2 GID at
// `ipv4_gid_index` (nullopt: the port has none, and UCX takes another); nullopt when none.
std::optional<UcxDeviceQuirk> FindUcxDeviceQuirk(const sysfs::InfinibandDevice& device,
                                                 std::optional<unsigned> ipv4_gid_index,
                                                 const std::string& ucx_version);

}  // namespace rail::probe
