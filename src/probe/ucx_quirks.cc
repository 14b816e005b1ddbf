#include "rail/probe/ucx_quirks.h"

#include <spdlog/fmt/fmt.h>

namespace rail::probe {

std::string UcxDeviceQuirk::Describe() const {
  return fmt::format(
      "UCX {} on {} {}: with the IPv4 RoCE v2 GID (index {}) UD wire-up times out (ud_ep.c "
      "\"Fatal: UD endpoint ... unhandled timeout error\") and the endpoint's close then asserts "
      "(ucp_request.c \"Assertion ... got REQ message\"), aborting every UCX process on the host "
      "(NCCL, MPI, UCX-based transfers alike); they need {} or UCX_IB_GID_INDEX=0 in their "
      "environment",
      ucx_version, driver, device, gid_index, UcxQuirkSettings().front());
}

const std::vector<std::string>& UcxQuirkSettings() {
  // The DGID check is what fails on rxe's IPv4-mapped GID; UCX_IB_GID_INDEX=0 (the link-local
  // IPv6 GID) works as well but routes no further than the link.
  static const std::vector<std::string> kSettings = {"UCX_UD_VERBS_ETH_DGID_CHECK=n",
                                                     "UCX_IB_GID_INDEX=0"};
  return kSettings;
}

bool ShowsRxeUdQuirk(const std::string& error_message) {
  return error_message.find("unhandled timeout error") != std::string::npos ||
         error_message.find("got REQ message") != std::string::npos;
}

bool UcxVersionHasRxeUdQuirk(const std::string& ucx_version) {
  // Seen with Debian 12's UCX 1.13.1; later releases are not known to have it.
  return ucx_version == "1.13" || ucx_version.starts_with("1.13.");
}

bool IsSoftRoce(const sysfs::InfinibandDevice& device) {
  return device.virtual_device && device.parent.has_value();
}

std::optional<UcxDeviceQuirk> FindUcxDeviceQuirk(const sysfs::InfinibandDevice& device,
                                                 std::optional<unsigned> ipv4_gid_index,
                                                 const std::string& ucx_version) {
  if (!IsSoftRoce(device) || !UcxVersionHasRxeUdQuirk(ucx_version)) return std::nullopt;
  // At index 0 sits the link-local IPv6 GID, which works.
  if (!ipv4_gid_index || *ipv4_gid_index == 0) return std::nullopt;
  return UcxDeviceQuirk{device.name, "rxe (Soft-RoCE)", ucx_version, *ipv4_gid_index};
}

}  // namespace rail::probe
