// What this binary is: the agent's version and revision, and the compiler that built it. The
// UCX version the agent runs with is the probe layer's to tell (rail/probe/ucx_version.h).
#pragma once

#include <string>

namespace rail::base {

struct BuildInfo {
  std::string version;
  std::string revision;
  std::string compiler;
};

const BuildInfo& GetBuildInfo();

}  // namespace rail::base
