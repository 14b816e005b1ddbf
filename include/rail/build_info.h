#pragma once

#include <string>

namespace rail {

struct BuildInfo {
  std::string version;
  std::string revision;
  std::string compiler;
  std::string ucx_version;  // of the libucp the agent runs with, not the one it was built with
};

const BuildInfo& GetBuildInfo();

}  // namespace rail
