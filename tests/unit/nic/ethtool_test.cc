// Reading `ethtool -S`: the dump parser, the recorded dumps of tests/fixtures/ethtool, and the
// kernel's answers this process can get without a NIC (no such netdev; loopback has no
// statistics). The lab reads veths through the ioctl (tests/e2e/lab_ethtool_test.py).
#include "rail/nic/ethtool.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace rail::nic {
namespace {

const std::string kDumps = std::string(RAIL_FIXTURES) + "/ethtool";

TEST(EthtoolDumpTest, ParsesNamesAndValuesInOrder) {
  const auto parsed = ParseEthtoolDump(
      "NIC statistics:\n     rx_packets: 12\n     [0]: rx_ucast_packets: 7\n"
      "     tx_prio3_pause: 18446744073709551615\n");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->names,
            (std::vector<std::string>{"rx_packets", "[0]: rx_ucast_packets", "tx_prio3_pause"}));
  EXPECT_EQ(parsed->values, (std::vector<std::uint64_t>{12, 7, 18446744073709551615ULL}));
}

TEST(EthtoolDumpTest, SkipsLinesThatDoNotParse) {
  const auto parsed = ParseEthtoolDump("NIC statistics:\n  a: 1\n  b: x\n  c: -1\n  d 4\n");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->names, std::vector<std::string>{"a"});
  EXPECT_FALSE(ParseEthtoolDump("NIC statistics:\n"));
}

TEST(EthtoolDumpTest, DriverLineOfEthtoolInfo) {
  EXPECT_EQ(ParseDriverInfo("driver: bnxt_en\nversion: 1\n"), "bnxt_en");
  EXPECT_FALSE(ParseDriverInfo("version: 1\n"));
}

TEST(EthtoolDumpTest, RecordedConnectX7HasAboutFifteenHundredStatistics) {
  sysfs::RootedFilesystem dumps(kDumps);
  DumpStatisticsSource source(dumps);
  EthtoolStatistics statistics;
  ASSERT_EQ(source.Read("connectx7-mlx5-pfc3", &statistics), 0);
  EXPECT_GT(statistics.names.size(), 1400u);
  EXPECT_LT(statistics.names.size(), 1600u);
  EXPECT_EQ(statistics.names.size(), statistics.values.size());
  EXPECT_EQ(source.Driver("connectx7-mlx5-pfc3"), "mlx5_core");
  EXPECT_EQ(source.Driver("bnxt_en"), "bnxt_en");
  EXPECT_EQ(source.Read("no-such-netdev", &statistics), ENOENT);
}

TEST(KernelStatisticsTest, UnknownNetdevIsNoDevice) {
  const auto source = MakeKernelStatisticsSource();
  EthtoolStatistics statistics;
  EXPECT_EQ(source->Read("rail-no-such0", &statistics), ENODEV);
  EXPECT_EQ(source->Read("a-name-longer-than-ifnamsiz", &statistics), ENODEV);
  EXPECT_FALSE(source->Driver("rail-no-such0"));
}

TEST(KernelStatisticsTest, LoopbackListsNoStatistics) {
  const auto source = MakeKernelStatisticsSource();
  EthtoolStatistics statistics;
  const int error = source->Read("lo", &statistics);
  EXPECT_EQ(error, EOPNOTSUPP) << "errno " << error;
  EXPECT_TRUE(statistics.names.empty());
}

}  // namespace
}  // namespace rail::nic
