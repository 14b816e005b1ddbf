#include "rail/base/companion.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace rail::base {
namespace {

TEST(CompanionPaths, BuildTreeFirstThenInstalledLayout) {
  const auto paths = CompanionPaths("/usr/bin/rail_exporter", "rail_exporter_probe_worker");
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0], "/usr/bin/rail_exporter_probe_worker");
  EXPECT_EQ(paths[1], "/usr/lib/rail_exporter/rail_exporter_probe_worker");
}

TEST(CompanionPaths, RelativeToAnyPrefix) {
  const auto paths = CompanionPaths("/opt/rail/bin/rail_exporter", "librail_tls_compat.so");
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0], "/opt/rail/bin/librail_tls_compat.so");
  EXPECT_EQ(paths[1], "/opt/rail/lib/rail_exporter/librail_tls_compat.so");
}

TEST(OwnCompanionPaths, StartBesideThisTestBinary) {
  const auto paths = OwnCompanionPaths("x");
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0].parent_path(), std::filesystem::read_symlink("/proc/self/exe").parent_path());
}

}  // namespace
}  // namespace rail::base
