// PcieTopologyCache: the placement is kept while bus/pci/devices and the RDMA devices' names and
// node GUIDs stay the same; the links' current speed and width are read on every call.
#include "rail/inventory/topology_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "support/fixture_paths.h"

namespace rail::inventory {
namespace {

namespace fs = std::filesystem;
using ::testing::Optional;

using rail::test::kFixtures;

std::vector<sysfs::InfinibandDevice> HgxNics() {
  std::vector<sysfs::InfinibandDevice> devices;
  for (int i = 0; i < 8; ++i) {
    sysfs::InfinibandDevice device;
    device.name = "mlx5_" + std::to_string(i);
    device.node_guid = "b83f:d203:0000:1a0" + std::to_string(i);
    devices.push_back(device);
  }
  return devices;
}

void Write(const fs::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::trunc);
  out << contents;
}

std::vector<std::string> GpuAddresses(const PcieTopology& topology) {
  std::vector<std::string> addresses;
  for (const auto& gpu : topology.gpus) addresses.push_back(gpu.pci_bus_id);
  return addresses;
}

// A copy of the hgx-8gpu tree (its links relative, so they stay inside the copy) that a test
// may change; read without the descriptor cache, so every change is seen at once.
class TopologyCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/rail-topology-cache-test-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    root_ = dir_template;
    fs::copy(kFixtures + "/hgx-8gpu/sys", root_ / "sys",
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    sysfs::RootedFilesystem::Options options;
    options.cache_open_files = false;
    sys_ = std::make_unique<sysfs::RootedFilesystem>((root_ / "sys").string(), options);
  }
  void TearDown() override { fs::remove_all(root_); }

  PcieTopology Read(const std::vector<sysfs::InfinibandDevice>& devices) {
    sysfs::ReadErrors errors;
    auto topology = cache_.Read(*sys_, devices, errors);
    EXPECT_TRUE(errors.empty());
    return topology;
  }

  fs::path root_;
  std::unique_ptr<sysfs::RootedFilesystem> sys_;
  PcieTopologyCache cache_;
};

TEST_F(TopologyCacheTest, KeptTopologyIsWhatAFullReadSays) {
  sysfs::ReadErrors errors;
  const auto fresh = ReadPcieTopology(*sys_, HgxNics(), errors);
  Read(HgxNics());
  const auto kept = Read(HgxNics());
  EXPECT_EQ(cache_.full_reads(), 1u);
  EXPECT_EQ(GpuAddresses(kept), GpuAddresses(fresh));
  ASSERT_EQ(kept.devices.size(), fresh.devices.size());
  ASSERT_EQ(kept.paths.size(), fresh.paths.size());
  for (std::size_t i = 0; i < kept.paths.size(); ++i) {
    EXPECT_EQ(kept.paths[i].path, fresh.paths[i].path) << i;
  }
  // mlx5_5 trained at x8 of x16 (the fixture's README).
  EXPECT_THAT(FindRdmaDevice(kept, "mlx5_5")->link.link.current_width, Optional(8u));
  EXPECT_THAT(FindRdmaDevice(kept, "mlx5_5")->link.attainable_width, Optional(16u));
}

TEST_F(TopologyCacheTest, CurrentLinkIsReadEveryTime) {
  Read(HgxNics());
  const fs::path gpu = root_ / "sys/bus/pci/devices/0000:03:00.0";
  Write(gpu / "current_link_width", "4\n");
  Write(gpu / "current_link_speed", "2.5 GT/s PCIe\n");
  Write(root_ / "sys/bus/pci/devices/0000:05:00.0/current_link_width", "2\n");  // mlx5_0
  const auto topology = Read(HgxNics());
  EXPECT_EQ(cache_.full_reads(), 1u);
  EXPECT_THAT(topology.gpus[0].link.link.current_width, Optional(4u));
  EXPECT_THAT(topology.gpus[0].link.link.current_speed_gts, Optional(2.5));
  EXPECT_THAT(topology.gpus[0].link.attainable_width, Optional(16u));
  EXPECT_THAT(FindRdmaDevice(topology, "mlx5_0")->link.link.current_width, Optional(2u));
}

TEST_F(TopologyCacheTest, PciFunctionAddedIsAFullRead) {
  ASSERT_EQ(Read(HgxNics()).gpus.size(), 8u);
  const fs::path gpu = root_ / "sys/bus/pci/devices/0000:f2:00.0";  // hot-plugged, no links
  fs::create_directories(gpu);
  Write(gpu / "vendor", "0x10de\n");
  Write(gpu / "device", "0x2330\n");
  Write(gpu / "class", "0x030200\n");
  const auto topology = Read(HgxNics());
  EXPECT_EQ(cache_.full_reads(), 2u);
  EXPECT_EQ(topology.gpus.size(), 9u);
  EXPECT_EQ(topology.paths.size(), 72u);
}

TEST_F(TopologyCacheTest, DeviceRegisteredAnewOrGoneIsAFullRead) {
  Read(HgxNics());
  auto devices = HgxNics();
  devices[3].node_guid = "b83f:d203:0000:ffff";  // another NIC under the old name
  Read(devices);
  EXPECT_EQ(cache_.full_reads(), 2u);
  devices.pop_back();
  EXPECT_EQ(Read(devices).devices.size(), 7u);
  EXPECT_EQ(cache_.full_reads(), 3u);
  Read(devices);
  EXPECT_EQ(cache_.full_reads(), 3u);
}

TEST_F(TopologyCacheTest, DeviceWithoutNodeGuidIsReadInFullEveryTime) {
  auto devices = HgxNics();
  devices[0].node_guid.reset();
  Read(devices);
  Read(devices);
  EXPECT_EQ(cache_.full_reads(), 2u);
}

}  // namespace
}  // namespace rail::inventory
