// Reading `ethtool -S`: the dump parser, the recorded dumps of tests/fixtures/ethtool, and the
// kernel's answers this process can get without a NIC (no such netdev; loopback has no
// statistics). The lab reads veths through the ioctl (tests/e2e/lab_ethtool_test.py).
#include "rail/nic/ethtool.h"

#include <gtest/gtest.h>
#include <linux/ethtool.h>

#include <cerrno>

#include "support/fixture_paths.h"

namespace rail::nic {
namespace {

using rail::test::kEthtoolDumps;

TEST(EthtoolDumpTest, ParsesNamesAndValuesInOrder) {
  const auto parsed = ParseEthtoolDump(
      "NIC statistics:\n     rx_packets: 12\n     [0]: rx_ucast_packets: 7\n"
      "     tx_prio3_pause: 18446744073709551615\n");
  EXPECT_EQ(parsed.names,
            (std::vector<std::string>{"rx_packets", "[0]: rx_ucast_packets", "tx_prio3_pause"}));
  EXPECT_EQ(parsed.values, (std::vector<std::uint64_t>{12, 7, 18446744073709551615ULL}));
  EXPECT_EQ(parsed.unparsable, 0u);
}

TEST(EthtoolDumpTest, LinesThatDoNotParseAreSkippedAndCounted) {
  const auto parsed = ParseEthtoolDump(
      "NIC statistics:\n  a: 1\n  b: x\n  c: -1\n  d 4\n  e: 18446744073709551616\n"
      "  \x01\xff: 3\n\n  f: 2\n");
  EXPECT_EQ(parsed.names, (std::vector<std::string>{"a", "f"}));
  EXPECT_EQ(parsed.unparsable, 5u);  // b, c, d, e (past 2^64 - 1) and the unprintable name
  EXPECT_EQ(parsed.first_unparsable, "b: x");
}

TEST(EthtoolDumpTest, AnEmptyDumpOrNoStatsAvailableHoldsNothingAndNoError) {
  for (const char* text : {"", "NIC statistics:\n", "no stats available\n"}) {
    const auto parsed = ParseEthtoolDump(text);
    EXPECT_TRUE(parsed.names.empty()) << text;
    EXPECT_EQ(parsed.unparsable, 0u) << text;
  }
}

TEST(EthtoolDumpTest, ATruncatedDumpKeepsWhatParsedAndCountsTheCutLine) {
  const auto parsed =
      ParseEthtoolDump("NIC statistics:\n     rx_packets: 12\n     rx_discards_phy: 4\n     rx_ou");
  EXPECT_EQ(parsed.names, (std::vector<std::string>{"rx_packets", "rx_discards_phy"}));
  EXPECT_EQ(parsed.unparsable, 1u);
  EXPECT_EQ(parsed.first_unparsable, "rx_ou");
}

TEST(EthtoolDecodeTest, TheKernelsNamesAreCheckedLikeADumpsLines) {
  std::string strings(4 * ETH_GSTRING_LEN, '\0');
  strings.replace(0, 10, "rx_packets");
  strings.replace(ETH_GSTRING_LEN, 5, "bad\x07x");  // a control byte
  // The third is empty; the fourth fills all 32 bytes with no NUL.
  strings.replace(3 * ETH_GSTRING_LEN, ETH_GSTRING_LEN, std::string(ETH_GSTRING_LEN, 'z'));
  const std::vector<std::uint64_t> values = {1, 2, 3, 4};
  const auto decoded = DecodeStatistics(strings, values);
  EXPECT_EQ(decoded.names, (std::vector<std::string>{"rx_packets", std::string(32, 'z')}));
  EXPECT_EQ(decoded.values, (std::vector<std::uint64_t>{1, 4}));
  EXPECT_EQ(decoded.unparsable, 2u);
  EXPECT_EQ(decoded.first_unparsable, "bad?x");
  // Fewer values than names: only the pairs.
  EXPECT_EQ(DecodeStatistics(strings, std::span(values).first(1)).names.size(), 1u);
}

TEST(EthtoolDumpTest, DriverLineOfEthtoolInfo) {
  EXPECT_EQ(ParseDriverInfo("driver: bnxt_en\nversion: 1\n"), "bnxt_en");
  EXPECT_FALSE(ParseDriverInfo("version: 1\n"));
}

TEST(EthtoolDumpTest, RecordedConnectX7HasAboutEighteenHundredStatistics) {
  sysfs::RootedFilesystem dumps(kEthtoolDumps);
  DumpStatisticsSource source(dumps);
  EthtoolStatistics statistics;
  ASSERT_EQ(source.Read("connectx7-mlx5-pfc3", &statistics), 0);
  EXPECT_EQ(statistics.names.size(), 1779u);  // make_dumps.py, from the 6.12 table
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

TEST(PrivateFlagsTest, ParsesEthtoolsPaddedLines) {
  const auto flags = ParsePrivateFlags(
      "Private flags for ens801f0:\nlink-down-on-close     : off\nfw-lldp-agent          : on\n"
      "vf-true-promisc-support: off\n");
  ASSERT_TRUE(flags);
  EXPECT_EQ(*flags, (std::vector<PrivateFlag>{{"link-down-on-close", false},
                                              {"fw-lldp-agent", true},
                                              {"vf-true-promisc-support", false}}));
  EXPECT_EQ(ParsePrivateFlags("Private flags for lo:\n"), std::vector<PrivateFlag>{});
  EXPECT_EQ(ParsePrivateFlags("fw-lldp-agent: maybe\n"), std::nullopt);
}

TEST(PrivateFlagsTest, RecordedIceFlags) {
  const sysfs::RootedFilesystem dumps(kEthtoolDumps);
  const DumpStatisticsSource source(dumps);
  const auto flags = source.PrivateFlags("ice-fw-lldp-on");
  ASSERT_TRUE(flags);
  ASSERT_EQ(flags->size(), 6u);
  EXPECT_EQ((*flags)[1], (PrivateFlag{"fw-lldp-agent", true}));
  EXPECT_EQ(source.PrivateFlags("connectx7-mlx5-pfc3"), std::nullopt) << "none recorded";
}

// Through the ioctl: loopback's driver has no private flags; an unknown netdev cannot be asked.
TEST(KernelStatisticsTest, PrivateFlagsOfLoopbackAndOfNoSuchNetdev) {
  const auto kernel = MakeKernelStatisticsSource();
  EXPECT_EQ(kernel->PrivateFlags("lo"), std::vector<PrivateFlag>{});
  EXPECT_EQ(kernel->PrivateFlags("no-such-netdev0"), std::nullopt);
}

}  // namespace
}  // namespace rail::nic
