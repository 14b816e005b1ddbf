// The ethtool collector on the spark-dual-rail fixture: its families with their labels and units,
// nothing asked of the NIC when it is off, and the fabric checks judged over two scrapes of the
// same CollectorSet (its health context keeps the history).
#include <gtest/gtest.h>

#include <atomic>

#include "rail/collectors/collector_set.h"
#include "rail/nic/ethtool.h"
#include "support/fake_clock.h"
#include "support/fixture_paths.h"
#include "support/scrape.h"

namespace rail::collectors {
namespace {

using namespace std::chrono_literals;

using rail::test::kSparkTree;
const std::string kRail = "rocep1s0f0:1";

// The tree's dumps, counting how often they are asked for.
class CountingStatistics final : public nic::StatisticsSource {
 public:
  CountingStatistics() : dumps_(kSparkTree + "/ethtool"), recorded_(dumps_) {}
  int Read(const std::string& netdev, nic::EthtoolStatistics* out) const override {
    ++reads;
    return recorded_.Read(netdev, out);
  }
  std::optional<std::string> Driver(const std::string& netdev) const override {
    return recorded_.Driver(netdev);
  }
  mutable std::atomic<int> reads = 0;

 private:
  sysfs::RootedFilesystem dumps_;
  nic::DumpStatisticsSource recorded_;
};

class EthtoolCollectorTest : public ::testing::Test {
 protected:
  EthtoolCollectorTest() : sys_(kSparkTree + "/sys"), proc_(kSparkTree + "/proc") {
    sources_.inventory.sys = &sys_;
    sources_.inventory.proc = &proc_;
    sources_.inventory.nic_statistics = &statistics_;
    sources_.health.clock = &clock_;
  }

  sysfs::RootedFilesystem sys_;
  sysfs::RootedFilesystem proc_;
  CountingStatistics statistics_;
  test::FakeClock clock_;
  Sources sources_;
};

TEST_F(EthtoolCollectorTest, FamiliesInBaseUnitsWithTheirLabels) {
  const CollectorSet set(sources_, {"ethtool"});
  const auto families = set.Collect();
  using test::Sample;
  // 93412 µs of received pause on priority 3.
  EXPECT_DOUBLE_EQ(Sample(families, "rail_nic_pfc_pause_seconds_total",
                          {{"rail", kRail}, {"direction", "rx"}, {"priority", "3"}})
                       .value_or(-1),
                   0.093412);
  EXPECT_FALSE(Sample(families, "rail_nic_pfc_pause_seconds_total", {{"priority", "0"}}))
      << "PFC is off on priority 0: no series, not 0";
  EXPECT_DOUBLE_EQ(Sample(families, "rail_nic_outbound_pci_stalled_ratio",
                          {{"rail", kRail}, {"operation", "write"}})
                       .value_or(-1),
                   0.04);
  EXPECT_DOUBLE_EQ(
      Sample(families, "rail_nic_pause_storm_events_total", {{"severity", "warning"}}).value_or(-1),
      2);
  EXPECT_DOUBLE_EQ(Sample(families, "rail_nic_ethtool_statistics",
                          {{"netdev", "enp1s0f0np0"}, {"driver", "mlx5_core"}, {"mapped", "1"}})
                       .value_or(-1),
                   1779);
  EXPECT_DOUBLE_EQ(Sample(families, "rail_nic_temperature_celsius",
                          {{"rail", kRail}, {"hwmon", "hwmon3"}, {"label", "asic"}})
                       .value_or(-1),
                   61);
  std::size_t series = 0;
  for (const auto& family : families) {
    if (family.name.starts_with("rail_nic_") && !family.name.starts_with("rail_nic_temperature")) {
      series += family.metric.size();
    }
  }
  EXPECT_EQ(series, 61u) << "57 allow-listed counters, the statistics count, their availability "
                            "and the two error counts, one rail";
}

TEST_F(EthtoolCollectorTest, OffMeansNoIoctlAndNoFabricVerdict) {
  auto names = test::AllCollectorNames();
  std::erase(names, "ethtool");
  const CollectorSet set(sources_, names);
  const auto families = set.Collect();
  EXPECT_EQ(statistics_.reads.load(), 0);
  for (const auto& family : families) EXPECT_FALSE(family.name.starts_with("rail_nic_"));
  EXPECT_FALSE(test::Sample(families, "rail_check_ok", {{"check", "nic_temperature"}}));
}

TEST_F(EthtoolCollectorTest, WindowedChecksNeedASecondScrape) {
  const CollectorSet set(sources_, {"ethtool", "health"});
  EXPECT_FALSE(test::Sample(set.Collect(), "rail_check_ok", {{"check", "pfc_storm"}}));
  clock_.Advance(30s);
  const auto second = set.Collect();
  EXPECT_EQ(test::Sample(second, "rail_check_ok", {{"check", "pfc_storm"}, {"rail", kRail}}), 1)
      << "the dump does not change: high but flat";
  EXPECT_EQ(test::Sample(second, "rail_check_ok", {{"check", "link_flaps"}, {"rail", kRail}}), 1);
  EXPECT_EQ(statistics_.reads.load(), 8) << "four rails, asked again at every scrape";
}

}  // namespace
}  // namespace rail::collectors
