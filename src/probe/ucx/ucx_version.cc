#include "rail/probe/ucx_version.h"

#include <ucp/api/ucp.h>

namespace rail::probe {

const std::string& UcxRuntimeVersion() {
  static const std::string kVersion = ucp_get_version_string();
  return kVersion;
}

}  // namespace rail::probe
