#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rail/collectors/collector_set.h"
#include "rail/sysfs/filesystem.h"
#include "support/scrape.h"

namespace rail::collectors {
namespace {

using test::Sample;
using test::SampleCount;

const std::string kHgx = std::string(RAIL_FIXTURES) + "/hgx-8gpu";

std::vector<prometheus::MetricFamily> ScrapeHgx(std::vector<inventory::RailConfig> rails,
                                                std::vector<std::string> collectors) {
  sysfs::RootedFilesystem sys(kHgx + "/sys");
  sysfs::RootedFilesystem proc(kHgx + "/proc");
  Sources sources;
  sources.inventory.sys = &sys;
  sources.inventory.proc = &proc;
  sources.inventory.discover_unlisted = inventory::DiscoverUnlisted(rails, std::nullopt);
  sources.inventory.rails = std::move(rails);
  return CollectorSet(sources, collectors).Collect();
}

TEST(PcieCollector, PathsNameTheRailOrNone) {
  inventory::RailConfig rail;
  rail.name = "compute0";
  rail.device = "mlx5_0";
  const auto families = ScrapeHgx({rail}, {"pcie"});
  EXPECT_EQ(Sample(families, "rail_gpu_nic_path_info",
                   {{"pci_bus_id", "0000:03:00.0"},
                    {"device", "mlx5_0"},
                    {"rail", "compute0"},
                    {"path", "PIX"}}),
            1);
  // Only the configured rail is published: the other devices' paths carry rail="".
  EXPECT_EQ(
      Sample(families, "rail_gpu_nic_path_info",
             {{"pci_bus_id", "0000:03:00.0"}, {"device", "mlx5_7"}, {"rail", ""}, {"path", "SYS"}}),
      1);
  EXPECT_EQ(SampleCount(families, "rail_gpu_nic_path_info"), 64u);
  EXPECT_EQ(SampleCount(families, "rail_gpu_info"), 8u);
}

TEST(PcieCollector, LinksOfGpusAndDevices) {
  const auto families = ScrapeHgx({}, {"pcie"});
  EXPECT_EQ(Sample(families, "rail_pcie_link_width",
                   {{"pci_bus_id", "0000:86:00.0"}, {"device", "mlx5_5"}, {"kind", "current"}}),
            8);
  EXPECT_EQ(Sample(families, "rail_pcie_link_width",
                   {{"pci_bus_id", "0000:86:00.0"}, {"device", "mlx5_5"}, {"kind", "max"}}),
            16);
  EXPECT_EQ(Sample(families, "rail_pcie_link_transfers_per_second",
                   {{"pci_bus_id", "0000:c4:00.0"}, {"device", ""}, {"kind", "current"}}),
            32e9);
  EXPECT_EQ(Sample(families, "rail_gpu_info",
                   {{"pci_bus_id", "0000:c4:00.0"},
                    {"numa_node", "1"},
                    {"attach", "pcie"},
                    {"device_id", "0x2330"}}),
            1);
  // 8 GPUs and 8 NICs, current and max each.
  EXPECT_EQ(SampleCount(families, "rail_pcie_link_width"), 32u);
  EXPECT_EQ(SampleCount(families, "rail_pcie_link_transfers_per_second"), 32u);
}

TEST(PcieCollector, OffMeansNoFamilies) {
  const auto families = ScrapeHgx({}, {"infiniband", "rails"});
  EXPECT_EQ(SampleCount(families, "rail_gpu_info"), 0u);
  EXPECT_EQ(SampleCount(families, "rail_gpu_nic_path_info"), 0u);
  EXPECT_EQ(SampleCount(families, "rail_pcie_link_width"), 0u);
}

}  // namespace
}  // namespace rail::collectors
