#pragma once
// Where the agent finds the files it runs or loads besides itself (the probe worker, the TLS
// compatibility library): beside its own executable in a build tree, in ../lib/rail_exporter/ from
// it when installed (cmake/install.cmake, the package and the image use that layout).
#include <filesystem>
#include <string_view>
#include <vector>

namespace rail::base {

// The places to look for `file_name`, first match wins, for an agent running as `executable`.
std::vector<std::filesystem::path> CompanionPaths(const std::filesystem::path& executable,
                                                  std::string_view file_name);

// CompanionPaths for the running executable (/proc/self/exe); empty when that cannot be read.
std::vector<std::filesystem::path> OwnCompanionPaths(std::string_view file_name);

}  // namespace rail::base
