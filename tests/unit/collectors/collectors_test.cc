#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <optional>

#include "rail/collectors/collector_set.h"
#include "rail/sysfs/filesystem.h"
#include "support/fake_filesystem.h"
#include "support/fixture_paths.h"
#include "support/scrape.h"

namespace rail::collectors {
namespace {

using test::Sample;
using test::SampleCount;

using rail::test::kFixtures;

struct Scraper {
  explicit Scraper(const sysfs::Filesystem& sys, const sysfs::Filesystem& proc,
                   std::vector<std::string> collectors = test::AllCollectorNames(),
                   std::vector<inventory::RailConfig> rails = {}) {
    sources.inventory.sys = &sys;
    sources.inventory.proc = &proc;
    sources.inventory.discover_unlisted = inventory::DiscoverUnlisted(rails, std::nullopt);
    sources.inventory.rails = std::move(rails);
    sources.inventory.infiniband.device_filter = filter;
    set = std::make_unique<CollectorSet>(sources, collectors);
  }
  std::vector<prometheus::MetricFamily> Scrape() { return set->Collect(); }

  std::function<bool(const std::string&)> filter;
  Sources sources;
  std::unique_ptr<CollectorSet> set;
};

TEST(CollectorsTest, SparkPortCountersInBytesAndRate) {
  sysfs::RootedFilesystem sys(kFixtures + "/spark-dual-rail/sys");
  sysfs::RootedFilesystem proc(kFixtures + "/spark-dual-rail/proc");
  Scraper scraper(sys, proc);
  const auto families = scraper.Scrape();
  EXPECT_EQ(
      Sample(families, "rail_port_transmit_bytes_total", {{"device", "rocep1s0f0"}, {"port", "1"}}),
      1193298274412.0);
  EXPECT_EQ(
      Sample(families, "rail_port_transmit_bytes_total", {{"device", "rocep1s0f1"}, {"port", "1"}}),
      419917778456.0);
  EXPECT_EQ(Sample(families, "rail_port_rate_bytes_per_second", {{"device", "rocep1s0f0"}}),
            12.5e9);
  EXPECT_EQ(Sample(families, "rail_port_state_id", {{"device", "rocep1s0f0"}}), 4);
  EXPECT_EQ(Sample(families, "rail_port_physical_state_id", {{"device", "rocep1s0f0"}}), 5);
  EXPECT_EQ(Sample(families, "rail_infiniband_device_info",
                   {{"device", "rocep1s0f0"}, {"fw_ver", "28.45.4028"}, {"hca_type", "MT4129"}}),
            1);
  EXPECT_TRUE(Sample(families, "rail_port_hw_events_total",
                     {{"device", "rocep1s0f0"}, {"counter", "np_cnp_sent"}}));
  EXPECT_FALSE(Sample(families, "rail_port_hw_events_total", {{"counter", "lifespan"}}))
      << "lifespan is a setting, not a counter";
  EXPECT_EQ(Sample(families, "rail_exporter_scrape_collector_success", {{"collector", "gid"}}), 1);
  EXPECT_EQ(Sample(families, "rail_exporter_rdma_devices"), 4);
}

TEST(CollectorsTest, SparkGidsRailsAndNetdevs) {
  sysfs::RootedFilesystem sys(kFixtures + "/spark-dual-rail/sys");
  sysfs::RootedFilesystem proc(kFixtures + "/spark-dual-rail/proc");
  Scraper scraper(sys, proc);
  const auto families = scraper.Scrape();
  EXPECT_EQ(Sample(families, "rail_gid_info",
                   {{"device", "rocep1s0f0"},
                    {"type", "RoCE v2"},
                    {"ipv4", "192.168.100.11"},
                    {"netdev", "enp1s0f0np0"}}),
            1);
  EXPECT_EQ(Sample(families, "rail_gid_entries", {{"device", "rocep1s0f0"}}), 4)
      << "empty all-zero slots are not entries";
  EXPECT_EQ(Sample(families, "rail_info",
                   {{"rail", "rocep1s0f1:1"},
                    {"netdev", "enp1s0f1np1"},
                    {"ipv4", "192.168.200.11"},
                    {"link_layer", "Ethernet"}}),
            1);
  EXPECT_EQ(Sample(families, "rail_rails"), 4);
  EXPECT_EQ(Sample(families, "rail_netdev_mtu_bytes", {{"netdev", "enp1s0f0np0"}}), 9000);
  EXPECT_EQ(Sample(families, "rail_netdev_speed_bytes_per_second", {{"netdev", "enp1s0f0np0"}}),
            12.5e9);
  EXPECT_FALSE(Sample(families, "rail_netdev_mtu_bytes", {{"netdev", "enP7s7"}}))
      << "the management NIC is neither a rail nor an RDMA netdev";
}

TEST(CollectorsTest, BondedRoceBondAndSlaves) {
  sysfs::RootedFilesystem sys(kFixtures + "/bonded-roce/sys");
  sysfs::RootedFilesystem proc(kFixtures + "/bonded-roce/proc");
  Scraper scraper(sys, proc);
  const auto families = scraper.Scrape();
  EXPECT_EQ(Sample(families, "rail_bond_slaves", {{"bond", "bond0"}}), 2);
  EXPECT_EQ(Sample(families, "rail_bond_active_slaves", {{"bond", "bond0"}}), 2);
  EXPECT_EQ(SampleCount(families, "rail_bond_slave_up"), 2u);
  EXPECT_TRUE(Sample(families, "rail_netdev_mtu_bytes", {{"netdev", "bond0"}}));
  EXPECT_TRUE(Sample(families, "rail_gid_info", {{"netdev", "bond0"}}))
      << "GIDs re-pointed at the bond are published as they are";
}

TEST(CollectorsTest, QuirksSaturatedCounterIsFlagged) {
  sysfs::RootedFilesystem sys(kFixtures + "/quirks/sys");
  sysfs::RootedFilesystem proc(kFixtures + "/quirks/proc");
  Scraper scraper(sys, proc);
  const auto families = scraper.Scrape();
  double saturated = 0;
  for (const auto& family : families) {
    if (family.name != "rail_port_pma_saturated") continue;
    for (const auto& metric : family.metric) saturated += metric.gauge.value;
  }
  EXPECT_GE(saturated, 1) << "the quirks tree holds pegged PMA counters";
  // The pegged counters of a device's port 1: the series the count must agree with.
  auto saturated_on = [](const std::vector<prometheus::MetricFamily>& all, const char* device) {
    double count = 0;
    for (const auto& family : all) {
      if (family.name != "rail_port_pma_saturated") continue;
      for (const auto& metric : family.metric) {
        EXPECT_EQ(metric.gauge.value, 1) << "only pegged counters are published";
        for (const auto& label : metric.label) {
          if (label.name == "device" && label.value == device) ++count;
        }
      }
    }
    return count;
  };
  EXPECT_EQ(Sample(families, "rail_port_pma_saturated",
                   {{"device", "qib0"}, {"port", "1"}, {"counter", "port_xmit_data"}}),
            1);
  EXPECT_FALSE(Sample(families, "rail_port_pma_saturated",
                      {{"device", "qib0"}, {"port", "1"}, {"counter", "port_rcv_data"}}))
      << "a counter that did not peg has no saturation series";
  EXPECT_EQ(
      Sample(families, "rail_port_pma_saturated_counters", {{"device", "qib0"}, {"port", "1"}}),
      saturated_on(families, "qib0"));
  EXPECT_EQ(
      Sample(families, "rail_port_pma_saturated_counters", {{"device", "qib1"}, {"port", "1"}}),
      saturated_on(families, "qib1"));
  // qib1's classic port_xmit_data is pegged; counters_ext holds the 64-bit truth.
  EXPECT_EQ(Sample(families, "rail_port_transmit_bytes_total", {{"device", "qib1"}}),
            17179869180.0 * 4);
  EXPECT_FALSE(Sample(families, "rail_port_pma_saturated",
                      {{"device", "qib1"}, {"counter", "port_xmit_data"}}))
      << "the exported value is 64-bit and cannot peg";
  EXPECT_TRUE(Sample(families, "rail_port_unicast_transmit_packets_total", {{"device", "qib1"}}))
      << "counters only counters_ext/ has are exported too";
}

TEST(CollectorsTest, ExcludedDeviceIsNeverRead) {
  test::FakeFilesystem sys(kFixtures + "/spark-dual-rail/sys");
  sysfs::RootedFilesystem proc(kFixtures + "/spark-dual-rail/proc");
  Scraper scraper(sys, proc);
  scraper.sources.inventory.infiniband.device_filter = [](const std::string& device) {
    return device != "rocep1s0f1";
  };
  scraper.set = std::make_unique<CollectorSet>(scraper.sources, test::AllCollectorNames());
  const auto families = scraper.Scrape();
  EXPECT_FALSE(sys.WasAccessedUnder("class/infiniband/rocep1s0f1"));
  EXPECT_TRUE(sys.WasAccessedUnder("class/infiniband/rocep1s0f0"));
  EXPECT_FALSE(Sample(families, "rail_port_state_id", {{"device", "rocep1s0f1"}}));
  EXPECT_EQ(Sample(families, "rail_exporter_rdma_devices"), 3);
}

TEST(CollectorsTest, DisabledCollectorsPreventReads) {
  test::FakeFilesystem sys(kFixtures + "/spark-dual-rail/sys");
  sysfs::RootedFilesystem proc(kFixtures + "/spark-dual-rail/proc");
  // CollectorSet itself derives the reads from the enabled collectors: no GID table here.
  Scraper scraper(sys, proc, {"infiniband"});
  const auto families = scraper.Scrape();
  EXPECT_FALSE(sys.WasAccessedUnder("class/infiniband/rocep1s0f0/ports/1/gids"));
  EXPECT_FALSE(sys.WasAccessedUnder("class/net/enp1s0f0np0"));
  EXPECT_EQ(SampleCount(families, "rail_gid_info"), 0u);
  EXPECT_EQ(SampleCount(families, "rail_info"), 0u);
  EXPECT_FALSE(Sample(families, "rail_exporter_scrape_collector_success", {{"collector", "gid"}}));
}

// node_exporter's three collectors read what node_exporter reads: no hw_counters/, no netdev
// statistics/ (their own collectors'), no GID table.
TEST(CollectorsTest, HwCountersAndNetdevStatisticsAreReadOnlyForTheirCollectors) {
  test::FakeFilesystem sys(kFixtures + "/spark-dual-rail/sys");
  sysfs::RootedFilesystem proc(kFixtures + "/spark-dual-rail/proc");
  const std::vector<std::string> same_as_node_exporter = {"infiniband", "netclass", "bonding"};
  Scraper scraper(sys, proc, same_as_node_exporter);
  SelectReads(same_as_node_exporter, &scraper.sources.inventory);
  scraper.set = std::make_unique<CollectorSet>(scraper.sources, same_as_node_exporter);
  auto families = scraper.Scrape();
  EXPECT_FALSE(sys.WasAccessedUnder("class/infiniband/rocep1s0f0/ports/1/hw_counters"));
  EXPECT_FALSE(sys.WasAccessedUnder("class/infiniband/rocep1s0f0/ports/1/gids"));
  EXPECT_FALSE(sys.WasAccessedUnder("class/net/enp1s0f0np0/statistics"));
  EXPECT_TRUE(sys.WasAccessedUnder("class/net/enp1s0f0np0/mtu"));
  EXPECT_EQ(Sample(families, "rail_port_transmit_bytes_total", {{"device", "rocep1s0f0"}}),
            1193298274412.0);
  EXPECT_EQ(SampleCount(families, "rail_port_hw_events_total"), 0u);
  EXPECT_EQ(SampleCount(families, "rail_netdev_transmit_bytes_total"), 0u);

  test::FakeFilesystem all_sys(kFixtures + "/spark-dual-rail/sys");
  Scraper all(all_sys, proc);
  SelectReads(test::AllCollectorNames(), &all.sources.inventory);
  all.set = std::make_unique<CollectorSet>(all.sources, test::AllCollectorNames());
  families = all.Scrape();
  EXPECT_TRUE(all_sys.WasAccessedUnder("class/infiniband/rocep1s0f0/ports/1/hw_counters"));
  EXPECT_TRUE(all_sys.WasAccessedUnder("class/net/enp1s0f0np0/statistics"));
  EXPECT_GT(SampleCount(families, "rail_port_hw_events_total"), 0u);
  EXPECT_GT(SampleCount(families, "rail_netdev_transmit_bytes_total"), 0u);
}

TEST(CollectorsTest, UnreadableFileIsCountedAndTheRestIsServed) {
  test::FakeFilesystem sys(kFixtures + "/spark-dual-rail/sys");
  sys.FailRead("class/infiniband/rocep1s0f0/ports/1/counters/symbol_error", EIO);
  sys.FailRead("class/infiniband/rocep1s0f0/ports/1/hw_counters/out_of_buffer", EACCES);
  sysfs::RootedFilesystem proc(kFixtures + "/spark-dual-rail/proc");
  Scraper scraper(sys, proc);
  auto families = scraper.Scrape();
  EXPECT_EQ(Sample(families, "rail_exporter_read_errors_total", {{"reason", "io_error"}}), 1);
  EXPECT_EQ(Sample(families, "rail_exporter_read_errors_total", {{"reason", "permission_denied"}}),
            1);
  EXPECT_FALSE(Sample(families, "rail_port_symbol_errors_total", {{"device", "rocep1s0f0"}}));
  EXPECT_EQ(Sample(families, "rail_port_transmit_bytes_total", {{"device", "rocep1s0f0"}}),
            1193298274412.0);
  EXPECT_EQ(
      Sample(families, "rail_exporter_scrape_collector_success", {{"collector", "infiniband"}}), 1);
  // The counter of skipped reads accumulates across scrapes.
  families = scraper.Scrape();
  EXPECT_EQ(Sample(families, "rail_exporter_read_errors_total", {{"reason", "io_error"}}), 2);
}

TEST(CollectorsTest, HostWithoutRdmaServesNetdevInventory) {
  test::FakeFilesystem sys(kFixtures + "/spark-dual-rail/sys");
  sys.Remove("class/infiniband");
  sysfs::RootedFilesystem proc(kFixtures + "/spark-dual-rail/proc");
  Scraper scraper(sys, proc);
  const auto families = scraper.Scrape();
  EXPECT_EQ(Sample(families, "rail_exporter_rdma_devices"), 0);
  EXPECT_EQ(Sample(families, "rail_netdev_mtu_bytes", {{"netdev", "enP7s7"}}), 1500);
  EXPECT_FALSE(Sample(families, "rail_netdev_mtu_bytes", {{"netdev", "lo"}}));
  EXPECT_EQ(Sample(families, "rail_rails"), 0);
}

// A netdev-only rail is present while its netdev exists: a deleted veth or a NIC gone from the
// bus must show as rail_present 0, as a configured RDMA device that vanished does.
TEST(CollectorsTest, NetdevOnlyRailIsPresentOnlyWhileItsNetdevExists) {
  test::FakeFilesystem sys(kFixtures + "/spark-dual-rail/sys");
  sysfs::RootedFilesystem proc(kFixtures + "/spark-dual-rail/proc");
  std::vector<inventory::RailConfig> rails;
  for (const auto& [name, netdev] : {std::pair{"here", "enp1s0f0np0"}, {"gone", "ra9"}}) {
    inventory::RailConfig rail;
    rail.name = name;
    rail.netdev = netdev;
    rails.push_back(rail);
  }
  Scraper scraper(sys, proc, test::AllCollectorNames(), rails);
  auto families = scraper.Scrape();
  EXPECT_EQ(Sample(families, "rail_present", {{"rail", "here"}}), 1);
  EXPECT_EQ(Sample(families, "rail_present", {{"rail", "gone"}}), 0);
  sys.Remove("class/net/enp1s0f0np0");
  families = scraper.Scrape();
  EXPECT_EQ(Sample(families, "rail_present", {{"rail", "here"}}), 0);
  EXPECT_EQ(Sample(families, "rail_info", {{"rail", "here"}, {"netdev", "enp1s0f0np0"}}), 1)
      << "a configured rail stays listed while absent";
}

}  // namespace
}  // namespace rail::collectors
