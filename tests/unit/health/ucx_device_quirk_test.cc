// ucx_device_quirk: the rule of probe/ucx_quirks.h (driver, UCX version, GID index) as the check
// judges it on fixture trees, and the probe failures it names.
#include <gmock/gmock.h>

#include "health_fixture.h"
#include "rail/probe/ucx_quirks.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;

std::vector<CheckResult> EvaluateWith(const Host& host, const std::string& ucx_version) {
  auto inputs = host.Inputs();
  inputs.own_ucx_version = ucx_version;
  return EvaluateChecks(inputs);
}

TEST(UcxDeviceQuirkTest, SoftRoceWithUcx113AndTheIpv4GidFailsNamingTheSettings) {
  const Host host("rxe-dual-rail");
  const auto results = EvaluateWith(host, "1.13.1");
  ASSERT_EQ(host.rails.size(), 2u);
  for (const auto& rail : host.rails) {
    const auto verdict = Find(results, "ucx_device_quirk", rail.name);
    ASSERT_TRUE(verdict) << rail.name;
    EXPECT_FALSE(verdict->ok);
    EXPECT_THAT(verdict->reason, HasSubstr("UCX 1.13.1 on rxe (Soft-RoCE) " + rail.device));
    EXPECT_THAT(verdict->reason, HasSubstr("(index 1)"));
    EXPECT_THAT(verdict->reason, HasSubstr("UCX_UD_VERBS_ETH_DGID_CHECK=n"));
    EXPECT_THAT(verdict->reason, HasSubstr("UCX_IB_GID_INDEX=0"));
  }
}

TEST(UcxDeviceQuirkTest, AnotherUcxVersionPasses) {
  const Host host("rxe-dual-rail");
  const auto verdict = Find(EvaluateWith(host, "1.15.0"), "ucx_device_quirk", "rxe0:1");
  ASSERT_TRUE(verdict);
  EXPECT_TRUE(verdict->ok) << verdict->reason;
}

TEST(UcxDeviceQuirkTest, AnUnknownUcxVersionGivesNoVerdict) {
  const Host host("rxe-dual-rail");
  EXPECT_EQ(Count(EvaluateWith(host, ""), "ucx_device_quirk"), 0u);
  EXPECT_EQ(Count(EvaluateWith(host, probe::kUnknownUcxVersion), "ucx_device_quirk"), 0u);
}

TEST(UcxDeviceQuirkTest, AHardwareNicIsNotJudged) {
  const Host host("spark-dual-rail");
  EXPECT_EQ(Count(EvaluateWith(host, "1.13.1"), "ucx_device_quirk"), 0u);
}

TEST(UcxDeviceQuirkTest, TheIpv6GidAtIndexZeroPasses) {
  Host host("rxe-dual-rail");
  host.rails[0].roce_v2_gid_index = 0;
  const auto verdict = Find(EvaluateWith(host, "1.13.1"), "ucx_device_quirk", "rxe0:1");
  ASSERT_TRUE(verdict);
  EXPECT_TRUE(verdict->ok) << verdict->reason;
}

TEST(UcxDeviceQuirkTest, TheRuleByDriverVersionAndGidIndex) {
  sysfs::InfinibandDevice rxe;
  rxe.name = "rxe0";
  rxe.virtual_device = true;
  rxe.parent = "eth0";
  EXPECT_TRUE(probe::FindUcxDeviceQuirk(rxe, 1, "1.13.1"));
  EXPECT_TRUE(probe::FindUcxDeviceQuirk(rxe, 1, "1.13"));
  EXPECT_FALSE(probe::FindUcxDeviceQuirk(rxe, 1, "1.14.1"));
  EXPECT_FALSE(probe::FindUcxDeviceQuirk(rxe, 1, "1.1.3"));
  EXPECT_FALSE(probe::FindUcxDeviceQuirk(rxe, 0, "1.13.1"));
  EXPECT_FALSE(probe::FindUcxDeviceQuirk(rxe, std::nullopt, "1.13.1"));
  sysfs::InfinibandDevice siw = rxe;  // software too, but names no parent netdev
  siw.parent.reset();
  EXPECT_FALSE(probe::FindUcxDeviceQuirk(siw, 1, "1.13.1"));
  sysfs::InfinibandDevice mlx5 = rxe;  // a PCI function
  mlx5.virtual_device = false;
  EXPECT_FALSE(probe::FindUcxDeviceQuirk(mlx5, 3, "1.13.1"));
}

TEST(UcxDeviceQuirkTest, NamesTheProbeFailuresWithTheQuirksSignature) {
  Host host("rxe-dual-rail");
  auto& failed = host.AddResult(probe::ProbeKind::kUcxThroughput, {"rxe0:1"}, 0);
  failed.success = false;
  host.series.back().consecutive_failures = 2;
  host.series.back().last_failure_reason = "worker_crashed";
  host.series.back().last_failure_message =
      "the probe worker died during the call (sigabrt); its last fatal line: [lab-a:812  :0:812]  "
      "ucp_request.c:684  Assertion `0' failed: got REQ message";
  const auto results = EvaluateWith(host, "1.13.1");
  EXPECT_THAT(Find(results, "ucx_device_quirk", "rxe0:1")->reason,
              HasSubstr("ucx_throughput of peer b fails so: the probe worker died"));
  EXPECT_THAT(Find(results, "ucx_device_quirk", "rxe1:1")->reason,
              ::testing::Not(HasSubstr("fails so")));
}

}  // namespace
}  // namespace rail::health::test
