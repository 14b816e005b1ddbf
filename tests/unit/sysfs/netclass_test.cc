#include "rail/sysfs/netclass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "support/fake_filesystem.h"
#include "support/fixture_paths.h"

namespace rail::sysfs {
namespace {

using test::FakeFilesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

using rail::test::kFixtures;
using rail::test::kSparkSys;

TEST(ListNetDevices, SparkFixture) {
  RootedFilesystem fs(kSparkSys);
  ReadErrors errors;
  EXPECT_THAT(ListNetDevices(fs, errors), ElementsAre("enP2p1s0f0np0", "enP2p1s0f1np1", "enP7s7",
                                                      "enp1s0f0np0", "enp1s0f1np1", "lo"));
  EXPECT_TRUE(errors.empty());
}

TEST(ListNetDevices, SkipsBondingMastersFile) {
  RootedFilesystem fs(kFixtures + "/bonded-roce/sys");
  ReadErrors errors;
  EXPECT_THAT(ListNetDevices(fs, errors), ElementsAre("bond0", "enp1s0f0np0", "enp1s0f1np1"));
  EXPECT_TRUE(errors.empty());
}

TEST(ListNetDevices, MissingClassDirectory) {
  FakeFilesystem fs;
  ReadErrors errors;
  EXPECT_THAT(ListNetDevices(fs, errors), IsEmpty());
  EXPECT_TRUE(errors.empty());
}

TEST(ReadNetDevice, SparkRailNetdev) {
  RootedFilesystem fs(kSparkSys);
  ReadErrors errors;
  auto dev = ReadNetDevice(fs, "enp1s0f0np0", errors);
  ASSERT_TRUE(dev);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(dev->name, "enp1s0f0np0");
  EXPECT_EQ(dev->operstate, "up");
  EXPECT_EQ(dev->carrier, true);
  EXPECT_EQ(dev->mtu, 9000u);
  EXPECT_EQ(dev->speed_mbps, 100000);
  EXPECT_EQ(dev->address, "30:c5:99:3e:6a:13");
  EXPECT_EQ(dev->type, 1u);
  EXPECT_EQ(dev->statistics.size(), 10u);
  EXPECT_EQ(dev->statistics.at("tx_bytes"), 5368709120u);
  EXPECT_EQ(dev->statistics.at("rx_bytes"), 4294967296u);
  EXPECT_EQ(dev->statistics.at("rx_dropped"), 3u);
}

TEST(ReadNetDevice, WithoutLinkAttributesOnlyCarrierDownCountAndStatistics) {
  RootedFilesystem fs(kSparkSys);
  ReadErrors errors;
  NetDeviceReadOptions options;
  options.link_attributes = false;
  auto dev = ReadNetDevice(fs, "enp1s0f0np0", errors, options);
  ASSERT_TRUE(dev);
  EXPECT_TRUE(errors.empty());
  EXPECT_FALSE(dev->operstate);
  EXPECT_FALSE(dev->carrier);
  EXPECT_FALSE(dev->mtu);
  EXPECT_FALSE(dev->speed_mbps);
  EXPECT_FALSE(dev->address);
  EXPECT_FALSE(dev->type);
  EXPECT_FALSE(dev->carrier_changes);
  EXPECT_EQ(dev->carrier_down_count, ReadNetDevice(fs, "enp1s0f0np0", errors)->carrier_down_count);
  EXPECT_TRUE(dev->carrier_down_count) << "the spark fixture has carrier_down_count";
  EXPECT_EQ(dev->statistics.size(), 10u);
}

TEST(ReadNetDevice, LoopbackHasNoSpeed) {
  RootedFilesystem fs(kSparkSys);
  ReadErrors errors;
  auto lo = ReadNetDevice(fs, "lo", errors);
  ASSERT_TRUE(lo);
  EXPECT_EQ(lo->speed_mbps, -1);
  EXPECT_EQ(lo->carrier, false);
  EXPECT_EQ(lo->mtu, 65536u);
  EXPECT_EQ(lo->operstate, "unknown");
}

TEST(ReadNetDevice, ProcfsEth0) {
  RootedFilesystem fs(kFixtures + "/procfs-ib/sys");
  ReadErrors errors;
  EXPECT_THAT(ListNetDevices(fs, errors), ElementsAre("eth0"));
  auto eth0 = ReadNetDevice(fs, "eth0", errors);
  ASSERT_TRUE(eth0);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(eth0->address, "01:01:01:01:01:01");
  EXPECT_EQ(eth0->carrier, true);
  EXPECT_EQ(eth0->mtu, 1500u);
  EXPECT_EQ(eth0->speed_mbps, 1000);
  EXPECT_EQ(eth0->operstate, "up");
  EXPECT_EQ(eth0->type, 1u);
  EXPECT_THAT(eth0->statistics, IsEmpty());
}

TEST(ReadNetDevice, QuirksDownAndIpoib) {
  RootedFilesystem fs(kFixtures + "/quirks/sys");
  ReadErrors errors;
  auto eno2 = ReadNetDevice(fs, "eno2", errors);
  ASSERT_TRUE(eno2);
  EXPECT_EQ(eno2->operstate, "down");
  EXPECT_EQ(eno2->carrier, false);
  EXPECT_EQ(eno2->speed_mbps, -1);
  EXPECT_EQ(eno2->mtu, 1500u);  // no trailing newline
  auto ib0 = ReadNetDevice(fs, "ib0", errors);
  ASSERT_TRUE(ib0);
  EXPECT_EQ(ib0->type, 32u);
  EXPECT_EQ(ib0->mtu, 2044u);
  EXPECT_EQ(ib0->address, "80:00:02:08:fe:80:00:00:00:00:00:00:00:11:75:00:00:79:a1:b2");
  EXPECT_EQ(ib0->statistics.at("tx_bytes"), 8192u);
  EXPECT_TRUE(errors.empty());
}

TEST(ReadNetDevice, CarrierAndSpeedOfADownInterfaceAnswerEinval) {
  FakeFilesystem fs(kSparkSys);
  fs.FailRead("class/net/enp1s0f0np0/carrier", EINVAL)
      .FailRead("class/net/enp1s0f0np0/speed", EINVAL)
      .AddFile("class/net/enp1s0f0np0/operstate", "down\n");
  ReadErrors errors;
  auto dev = ReadNetDevice(fs, "enp1s0f0np0", errors);
  ASSERT_TRUE(dev);
  EXPECT_FALSE(dev->carrier);
  EXPECT_FALSE(dev->speed_mbps);
  EXPECT_EQ(dev->operstate, "down");
  EXPECT_EQ(dev->mtu, 9000u);
  EXPECT_EQ(dev->statistics.at("tx_bytes"), 5368709120u);
  // "Unknown while down" is what a healthy host answers every scrape: not a read failure.
  EXPECT_TRUE(errors.empty());
}

TEST(ReadNetDevice, OtherCarrierFailuresAreRecorded) {
  FakeFilesystem fs(kSparkSys);
  fs.FailRead("class/net/enp1s0f0np0/carrier", EIO);
  ReadErrors errors;
  auto dev = ReadNetDevice(fs, "enp1s0f0np0", errors);
  ASSERT_TRUE(dev);
  EXPECT_FALSE(dev->carrier);
  ASSERT_EQ(errors.problems().size(), 1u);
  EXPECT_EQ(errors.Count(ReadFailure::kIoError), 1u);
  EXPECT_EQ(errors.problems()[0].path, "class/net/enp1s0f0np0/carrier");
}

TEST(ReadNetDevice, BadStatisticIsSkipped) {
  FakeFilesystem fs(kSparkSys);
  fs.AddFile("class/net/enP7s7/statistics/tx_bytes", "lots\n")
      .FailRead("class/net/enP7s7/statistics/rx_bytes", EACCES)
      .AddFile("class/net/enP7s7/carrier", "2\n");
  ReadErrors errors;
  auto dev = ReadNetDevice(fs, "enP7s7", errors);
  ASSERT_TRUE(dev);
  EXPECT_FALSE(dev->statistics.count("tx_bytes"));
  EXPECT_FALSE(dev->statistics.count("rx_bytes"));
  EXPECT_EQ(dev->statistics.at("tx_packets"), 15432u);
  EXPECT_EQ(dev->statistics.size(), 8u);
  EXPECT_FALSE(dev->carrier);
  EXPECT_EQ(errors.Count(ReadFailure::kMalformed), 2u);
  EXPECT_EQ(errors.Count(ReadFailure::kPermissionDenied), 1u);
}

TEST(ReadNetDevice, UnknownDeviceIsNullopt) {
  RootedFilesystem fs(kSparkSys);
  ReadErrors errors;
  EXPECT_FALSE(ReadNetDevice(fs, "eth9", errors));
  EXPECT_TRUE(errors.empty());
}

}  // namespace
}  // namespace rail::sysfs
