#include "rail/sysfs/filesystem.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

#include "support/fake_filesystem.h"
#include "support/fixture_paths.h"

namespace rail::sysfs {
namespace {

using test::FakeFilesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

using rail::test::kSparkSys;

TEST(RootedFilesystem, ReadsFileBelowRoot) {
  RootedFilesystem fs(kSparkSys);
  std::string contents;
  EXPECT_EQ(fs.ReadFile("class/infiniband/rocep1s0f0/ports/1/rate", &contents), 0);
  EXPECT_EQ(contents, "100 Gb/sec (2X HDR)\n");
  EXPECT_EQ(fs.ReadFile("/class/infiniband/rocep1s0f0/fw_ver", &contents), 0);
  EXPECT_EQ(contents, "28.45.4028\n");
}

TEST(RootedFilesystem, RootWithTrailingSlash) {
  RootedFilesystem fs(kSparkSys + "/");
  EXPECT_EQ(fs.root(), kSparkSys);
  std::string contents;
  EXPECT_EQ(fs.ReadFile("class/net/lo/mtu", &contents), 0);
  EXPECT_EQ(contents, "65536\n");
}

TEST(RootedFilesystem, ErrnoInsteadOfExceptions) {
  RootedFilesystem fs(kSparkSys);
  std::string contents = "stale";
  EXPECT_EQ(fs.ReadFile("class/infiniband/rocep1s0f0/no_such_file", &contents), ENOENT);
  // open() succeeds on a directory and read() fails: the path sysfs errors take too.
  EXPECT_EQ(fs.ReadFile("class/infiniband", &contents), EISDIR);
  EXPECT_EQ(contents, "");
  std::vector<std::string> names;
  EXPECT_EQ(fs.ListDirectory("class/nothing", &names), ENOENT);
  EXPECT_EQ(fs.ListDirectory("class/net/lo/mtu", &names), ENOTDIR);
}

TEST(RootedFilesystem, ListsDirectorySortedWithoutDots) {
  RootedFilesystem fs(kSparkSys);
  std::vector<std::string> names;
  ASSERT_EQ(fs.ListDirectory("class/infiniband", &names), 0);
  EXPECT_THAT(names, ElementsAre("roceP2p1s0f0", "roceP2p1s0f1", "rocep1s0f0", "rocep1s0f1"));
  ASSERT_EQ(fs.ListDirectory("class/infiniband/rocep1s0f0/ports/1/gids", &names), 0);
  EXPECT_THAT(names, ElementsAre("0", "1", "2", "3", "4", "5", "6", "7"));
}

TEST(RootedFilesystem, IsDirectoryAndExists) {
  RootedFilesystem fs(kSparkSys);
  EXPECT_TRUE(fs.IsDirectory("class/net/lo"));
  EXPECT_FALSE(fs.IsDirectory("class/net/lo/mtu"));
  EXPECT_TRUE(fs.Exists("class/net/lo/mtu"));
  EXPECT_FALSE(fs.Exists("class/net/lo/nothing"));
  EXPECT_FALSE(fs.IsDirectory("class/net/nothing"));
}

TEST(RootedFilesystem, ReadsFilesLargerThanOneBuffer) {
  char dir_template[] = "/tmp/rail-sysfs-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string big(10000, 'x');
  { std::ofstream(dir + "/big") << big; }
  RootedFilesystem fs(dir);
  std::string contents;
  EXPECT_EQ(fs.ReadFile("big", &contents), 0);
  EXPECT_EQ(contents.size(), big.size());
  EXPECT_EQ(contents, big);
  ::unlink((dir + "/big").c_str());
  ::rmdir(dir.c_str());
}

TEST(FakeFilesystem, InMemoryFilesAndImplicitDirectories) {
  FakeFilesystem fs;
  fs.AddFile("class/net/eth0/mtu", "1500\n").AddFile("class/net/eth1/mtu", "9000");
  std::string contents;
  EXPECT_EQ(fs.ReadFile("class/net/eth1/mtu", &contents), 0);
  EXPECT_EQ(contents, "9000");
  std::vector<std::string> names;
  ASSERT_EQ(fs.ListDirectory("class/net", &names), 0);
  EXPECT_THAT(names, ElementsAre("eth0", "eth1"));
  EXPECT_TRUE(fs.IsDirectory("class/net/eth0"));
  EXPECT_FALSE(fs.IsDirectory("class/net/eth0/mtu"));
  EXPECT_TRUE(fs.Exists("class/net/eth0/mtu"));
  EXPECT_EQ(fs.ReadFile("class/net/eth0", &contents), EISDIR);
  EXPECT_EQ(fs.ReadFile("class/net/eth2/mtu", &contents), ENOENT);
  EXPECT_EQ(fs.ListDirectory("class/block", &names), ENOENT);
}

TEST(FakeFilesystem, InjectsReadAndListErrors) {
  FakeFilesystem fs;
  fs.FailRead("a/carrier", EINVAL).FailList("a/statistics", EACCES).AddDirectory("a/empty");
  std::string contents;
  EXPECT_EQ(fs.ReadFile("a/carrier", &contents), EINVAL);
  std::vector<std::string> names;
  EXPECT_EQ(fs.ListDirectory("a/statistics", &names), EACCES);
  ASSERT_EQ(fs.ListDirectory("a", &names), 0);
  EXPECT_THAT(names, ElementsAre("carrier", "empty"));  // a failing file is still listed
  ASSERT_EQ(fs.ListDirectory("a/empty", &names), 0);
  EXPECT_THAT(names, IsEmpty());
}

TEST(FakeFilesystem, LayersOverFixtureTree) {
  FakeFilesystem fs(kSparkSys);
  fs.FailRead("class/net/lo/carrier", EINVAL)
      .AddFile("class/net/lo/extra", "1")
      .Remove("class/net/lo/speed");
  std::string contents;
  EXPECT_EQ(fs.ReadFile("class/net/lo/mtu", &contents), 0);  // from the fixture
  EXPECT_EQ(contents, "65536\n");
  EXPECT_EQ(fs.ReadFile("class/net/lo/carrier", &contents), EINVAL);
  EXPECT_EQ(fs.ReadFile("class/net/lo/speed", &contents), ENOENT);
  EXPECT_FALSE(fs.Exists("class/net/lo/speed"));
  std::vector<std::string> names;
  ASSERT_EQ(fs.ListDirectory("class/net/lo", &names), 0);
  EXPECT_THAT(names,
              ElementsAre("address", "carrier", "extra", "mtu", "operstate", "statistics", "type"));
  fs.Remove("class/net/lo");
  EXPECT_FALSE(fs.IsDirectory("class/net/lo"));
  ASSERT_EQ(fs.ListDirectory("class/net", &names), 0);
  EXPECT_THAT(
      names, ElementsAre("enP2p1s0f0np0", "enP2p1s0f1np1", "enP7s7", "enp1s0f0np0", "enp1s0f1np1"));
}

TEST(FakeFilesystem, RecordsEveryAccess) {
  FakeFilesystem fs;
  fs.AddFile("class/infiniband/a/fw_ver", "1");
  std::string contents;
  fs.ReadFile("/class/infiniband/a/fw_ver", &contents);
  fs.Exists("class/infiniband/b");
  EXPECT_THAT(fs.accessed(), ElementsAre("class/infiniband/a/fw_ver", "class/infiniband/b"));
  EXPECT_THAT(fs.reads(), ElementsAre("class/infiniband/a/fw_ver"));
  EXPECT_TRUE(fs.WasAccessedUnder("class/infiniband/b"));
  EXPECT_FALSE(fs.WasAccessedUnder("class/infiniband/c"));
  // A sibling sharing the prefix is not "under" it.
  EXPECT_FALSE(fs.WasAccessedUnder("class/infiniband/a/fw"));
}

TEST(RootedFilesystem, ResolvePathFollowsRelativeLinks) {
  RootedFilesystem fs(std::string(RAIL_FIXTURES) + "/hgx-8gpu/sys/");
  std::string resolved;
  ASSERT_EQ(fs.ResolvePath("bus/pci/devices/0000:03:00.0", &resolved), 0);
  EXPECT_EQ(resolved, "devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0");
  ASSERT_EQ(fs.ResolvePath("/class/infiniband/mlx5_0/device/", &resolved), 0);
  EXPECT_EQ(resolved, "devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:05:00.0");
  // Neither a link nor below one: the path itself.
  ASSERT_EQ(fs.ResolvePath("class/infiniband/mlx5_0/ports", &resolved), 0);
  EXPECT_EQ(resolved, "class/infiniband/mlx5_0/ports");
  ASSERT_EQ(fs.ResolvePath("", &resolved), 0);
  EXPECT_EQ(resolved, "");
  EXPECT_EQ(fs.ResolvePath("bus/pci/devices/0000:ff:00.0", &resolved), ENOENT);
}

TEST(RootedFilesystem, LinkTargetNameIsTheLastComponentOfTheLinksOwnTarget) {
  RootedFilesystem fs(std::string(RAIL_FIXTURES) + "/hgx-8gpu/sys/");
  std::string name;
  ASSERT_EQ(fs.LinkTargetName("class/infiniband/mlx5_0/device", &name), 0);
  std::string resolved;
  ASSERT_EQ(fs.ResolvePath("class/infiniband/mlx5_0/device", &resolved), 0);
  EXPECT_EQ(name, resolved.substr(resolved.rfind('/') + 1)) << "the same name realpath gives";
  EXPECT_EQ(fs.LinkTargetName("class/infiniband/mlx5_0/ports", &name), EINVAL) << "not a link";
  EXPECT_EQ(fs.LinkTargetName("class/infiniband/mlx5_99/device", &name), ENOENT);

  char dir_template[] = "/tmp/rail-linkname-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string root = dir_template;
  ASSERT_EQ(::symlink("../../bus/pci/drivers/mlx5_core/", (root + "/driver").c_str()), 0);
  ASSERT_EQ(::symlink("..", (root + "/up").c_str()), 0);
  RootedFilesystem scratch(root);
  ASSERT_EQ(scratch.LinkTargetName("driver", &name), 0) << "a dangling link still names it";
  EXPECT_EQ(name, "mlx5_core");
  EXPECT_EQ(scratch.LinkTargetName("up", &name), EINVAL);
  ::unlink((root + "/driver").c_str());
  ::unlink((root + "/up").c_str());
  ::rmdir(root.c_str());
}

TEST(RootedFilesystem, ResolvePathRefusesLinksOutOfTheRoot) {
  char dir_template[] = "/tmp/rail-resolve-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string root = dir_template;
  ASSERT_EQ(::symlink("/tmp", (root + "/out").c_str()), 0);
  ASSERT_EQ(::symlink("..", (root + "/up").c_str()), 0);
  RootedFilesystem fs(root);
  std::string resolved = "unchanged";
  EXPECT_EQ(fs.ResolvePath("out", &resolved), EXDEV);
  EXPECT_EQ(fs.ResolvePath("up", &resolved), EXDEV);
  EXPECT_EQ(resolved, "unchanged");
  ::unlink((root + "/out").c_str());
  ::unlink((root + "/up").c_str());
  ::rmdir(root.c_str());
}

TEST(FakeFilesystem, HasNoLinksToResolve) {
  FakeFilesystem fs;
  fs.AddFile("bus/pci/devices/0000:03:00.0/vendor", "0x10de\n");
  std::string resolved;
  EXPECT_EQ(fs.ResolvePath("bus/pci/devices/0000:03:00.0", &resolved), ENOSYS);
}

}  // namespace
}  // namespace rail::sysfs
