// RoCE ECN enablement: MLNX_OFED's ecn/roce_{np,rp}/enable/<p> files, absent on the in-box mlx5.
#include "rail/sysfs/roce_ecn.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "support/fake_filesystem.h"

namespace rail::sysfs {
namespace {

TEST(RoceEcnTest, InBoxDriverHasNoEcnFiles) {
  // The spark-dual-rail tree is an in-box mlx5: no ecn/ folder, so no ECN state, not "off".
  RootedFilesystem sys(std::string(RAIL_FIXTURES) + "/spark-dual-rail/sys");
  ReadErrors errors;
  EXPECT_FALSE(ReadRoceEcn(sys, "enp1s0f0np0", errors));
  EXPECT_TRUE(errors.empty());
}

TEST(RoceEcnTest, ReadsBothPointsPerPriority) {
  test::FakeFilesystem sys;
  for (int priority = 0; priority < 8; ++priority) {
    const auto p = std::to_string(priority);
    sys.AddFile("class/net/ens1f0/ecn/roce_np/enable/" + p, priority == 3 ? "1\n" : "0\n");
    sys.AddFile("class/net/ens1f0/ecn/roce_rp/enable/" + p, "1\n");
  }
  sys.AddFile("class/net/ens1f0/ecn/roce_rp/enable/5", "yes\n");
  sys.FailRead("class/net/ens1f0/ecn/roce_rp/enable/6", EACCES);
  ReadErrors errors;
  const auto ecn = ReadRoceEcn(sys, "ens1f0", errors);
  ASSERT_TRUE(ecn);
  EXPECT_EQ(ecn->notification_point[3], true);
  EXPECT_EQ(ecn->notification_point[2], false);
  EXPECT_EQ(ecn->reaction_point[0], true);
  // Unreadable or malformed: unknown, and counted.
  EXPECT_FALSE(ecn->reaction_point[5]);
  EXPECT_FALSE(ecn->reaction_point[6]);
  EXPECT_EQ(errors.Count(ReadFailure::kMalformed), 1u);
  EXPECT_EQ(errors.Count(ReadFailure::kPermissionDenied), 1u);
}

}  // namespace
}  // namespace rail::sysfs
