#include "rail/base/build_info.h"

namespace rail::base {

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
  };
  return kInfo;
}

}  // namespace rail::base
