// NIC temperatures from class/hwmon (the spark-dual-rail fixture's mlx5 hwmon device) and the
// netdev carrier counters beside them.
#include "rail/sysfs/hwmon.h"

#include <gtest/gtest.h>

#include "rail/sysfs/netclass.h"
#include "support/fixture_paths.h"

namespace rail::sysfs {
namespace {

using rail::test::kSparkSys;

TEST(HwmonTest, FindsTheNicsHwmonByItsPciFunction) {
  RootedFilesystem sys(kSparkSys);
  ReadErrors errors;
  const auto hwmons = ReadPciHwmons(
      sys, errors, [](const std::string& address) { return address == "0000:01:00.0"; });
  ASSERT_EQ(hwmons.size(), 1u);
  EXPECT_EQ(hwmons[0].name, "hwmon3");
  EXPECT_EQ(hwmons[0].chip, "mlx5");
  ASSERT_EQ(hwmons[0].temperatures.size(), 1u);
  const auto& sensor = hwmons[0].temperatures[0];
  EXPECT_EQ(sensor.sensor, "temp1");
  EXPECT_EQ(sensor.label, "asic");
  EXPECT_DOUBLE_EQ(sensor.celsius.value_or(0), 61.0);
  EXPECT_DOUBLE_EQ(sensor.critical_celsius.value_or(0), 105.0);
  EXPECT_TRUE(errors.empty());
}

TEST(HwmonTest, OtherFunctionsAreNotRead) {
  RootedFilesystem sys(kSparkSys);
  ReadErrors errors;
  EXPECT_TRUE(ReadPciHwmons(sys, errors, [](const std::string&) { return false; }).empty());
}

TEST(HwmonTest, NoHwmonClassIsNoError) {
  RootedFilesystem sys(std::string(RAIL_FIXTURES) + "/bonded-roce/sys");
  ReadErrors errors;
  EXPECT_TRUE(ReadPciHwmons(sys, errors, [](const std::string&) { return true; }).empty());
  EXPECT_TRUE(errors.empty());
}

TEST(NetclassCarrierTest, CarrierCountersWhereTheKernelHasThem) {
  RootedFilesystem sys(kSparkSys);
  ReadErrors errors;
  const auto flapped = ReadNetDevice(sys, "enp1s0f0np0", errors);
  ASSERT_TRUE(flapped);
  EXPECT_EQ(flapped->carrier_changes, 4u);
  EXPECT_EQ(flapped->carrier_up_count, 2u);
  EXPECT_EQ(flapped->carrier_down_count, 2u);
  const auto other = ReadNetDevice(sys, "enp1s0f1np1", errors);
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->carrier_changes) << "absent, never 0";
  EXPECT_FALSE(NetDeviceDriver(sys, "enp1s0f0np0")) << "the fixture has no driver link";
}

}  // namespace
}  // namespace rail::sysfs
