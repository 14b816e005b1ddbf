#include "web/connection_limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace rail::web::detail {
namespace {

using ::testing::HasSubstr;

// Descriptors that leave exactly `connections` connections: the inverse of the documented rule.
std::uint64_t FilesFor(std::uint64_t connections) {
  return 2 * (connections + kConnectionQueue + kReservedFiles);
}

TEST(FitConnections, NoLimitsKeepTheCeiling) {
  const ConnectionCeiling ceiling = FitConnections(1000, {});
  EXPECT_EQ(ceiling.connections, 1000);
  EXPECT_EQ(ceiling.lowered_by, "");
}

TEST(FitConnections, AmpleLimitsKeepTheCeiling) {
  const ConnectionCeiling ceiling = FitConnections(1000, {FilesFor(1000), 1000 + kReservedTasks});
  EXPECT_EQ(ceiling.connections, 1000);
  EXPECT_EQ(ceiling.lowered_by, "");
}

TEST(FitConnections, OpenFilesLowerTheCeilingAndAreNamed) {
  const ConnectionCeiling ceiling = FitConnections(1000, {FilesFor(1000) - 2, std::nullopt});
  EXPECT_EQ(ceiling.connections, 999);
  EXPECT_THAT(ceiling.lowered_by, HasSubstr("RLIMIT_NOFILE " + std::to_string(FilesFor(999))));
}

TEST(FitConnections, TheUsualSoftLimitOf1024Leaves320) {
  // 1024 / 2 = 512 for everything but the sysfs cache; 128 reserved, 64 for the accept queue.
  EXPECT_EQ(FitConnections(1000, {1024, std::nullopt}).connections, 320);
}

TEST(FitConnections, FreeTasksLowerTheCeilingAndAreNamed) {
  const ConnectionCeiling ceiling = FitConnections(1000, {std::nullopt, 500 + kReservedTasks});
  EXPECT_EQ(ceiling.connections, 500);
  EXPECT_THAT(ceiling.lowered_by, HasSubstr("pids.max"));
}

TEST(FitConnections, TheTighterLimitWins) {
  EXPECT_EQ(FitConnections(1000, {FilesFor(300), 600 + kReservedTasks}).connections, 300);
  const ConnectionCeiling tasks = FitConnections(1000, {FilesFor(600), 300 + kReservedTasks});
  EXPECT_EQ(tasks.connections, 300);
  EXPECT_THAT(tasks.lowered_by, HasSubstr("pids.max"));
}

TEST(FitConnections, NeverBelowTheMinimumNorAboveWhatWasAskedFor) {
  EXPECT_EQ(FitConnections(1000, {16, 3}).connections, kMinConnections);
  EXPECT_EQ(FitConnections(2, {16, 3}).connections, 2);
  EXPECT_EQ(FitConnections(2, {16, 3}).lowered_by, "");
}

class FreeTasksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        std::filesystem::path(::testing::TempDir()) /
        ("cgroup-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  void Pids(const std::string& directory, const std::string& max, const std::string& current) {
    const std::filesystem::path path = root_ / directory;
    std::filesystem::create_directories(path);
    std::ofstream(path / "pids.max") << max << "\n";
    std::ofstream(path / "pids.current") << current << "\n";
  }

  std::string Root() const { return root_.string(); }

  std::filesystem::path root_;
};

TEST_F(FreeTasksTest, CgroupV2ServiceWithTasksMax) {
  Pids("system.slice/rail.service", "4915", "15");
  Pids("system.slice", "max", "120");
  EXPECT_EQ(FreeTasks("0::/system.slice/rail.service\n", Root()), 4900u);
}

TEST_F(FreeTasksTest, TheTightestAncestorCounts) {
  Pids("kubepods/pod1/ctr", "max", "10");
  Pids("kubepods/pod1", "1024", "1000");  // other containers of the pod use most of it
  Pids("kubepods", "100000", "5000");
  EXPECT_EQ(FreeTasks("0::/kubepods/pod1/ctr\n", Root()), 24u);
}

TEST_F(FreeTasksTest, NamespacedRootHasTheLimit) {
  Pids("", "2048", "48");
  EXPECT_EQ(FreeTasks("0::/\n", Root()), 2000u);
  EXPECT_EQ(FreeTasks("0::/../../other\n", Root()), 2000u);
}

TEST_F(FreeTasksTest, CgroupV1PidsController) {
  Pids("pids/user.slice", "700", "100");
  EXPECT_EQ(FreeTasks("12:cpu,cpuacct:/user.slice\n8:pids:/user.slice\n0::/\n", Root()), 600u);
}

TEST_F(FreeTasksTest, NoLimitAnywhere) {
  Pids("system.slice/rail.service", "max", "15");
  EXPECT_EQ(FreeTasks("0::/system.slice/rail.service\n", Root()), std::nullopt);
  EXPECT_EQ(FreeTasks("garbage\n\n", Root()), std::nullopt);
  EXPECT_EQ(FreeTasks("0::/not/there\n", Root()), std::nullopt);
}

TEST_F(FreeTasksTest, AFullCgroupAdmitsNone) {
  Pids("full", "100", "130");  // a lowered limit may sit below what already runs
  EXPECT_EQ(FreeTasks("0::/full\n", Root()), 0u);
}

}  // namespace
}  // namespace rail::web::detail
