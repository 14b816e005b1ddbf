#include "rail/build_info.h"

#include <ucp/api/ucp.h>

namespace rail {

const BuildInfo& GetBuildInfo() {
  static const BuildInfo kInfo = {
    RAIL_VERSION,
    RAIL_GIT_REVISION,
#if defined(__clang__)
    "clang " __clang_version__,
#elif defined(__GNUC__)
    "gcc " __VERSION__,
#else
    "unknown",
#endif
    ucp_get_version_string(),
  };
  return kInfo;
}

}  // namespace rail
