#include "rail/base/companion.h"

#include <system_error>

namespace rail::base {

std::vector<std::filesystem::path> CompanionPaths(const std::filesystem::path& executable,
                                                  std::string_view file_name) {
  const std::filesystem::path directory = executable.parent_path();
  return {(directory / file_name).lexically_normal(),
          (directory / ".." / "lib" / "rail_exporter" / file_name).lexically_normal()};
}

std::vector<std::filesystem::path> OwnCompanionPaths(std::string_view file_name) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error || self.empty()) return {};
  return CompanionPaths(self, file_name);
}

}  // namespace rail::base
