#include "rail/inventory/pcie_topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "rail/inventory/snapshot.h"
#include "support/fake_filesystem.h"
#include "support/fixture_paths.h"

namespace rail::inventory {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

using rail::test::kFixtures;

std::vector<sysfs::InfinibandDevice> Devices(const std::vector<std::string>& names) {
  std::vector<sysfs::InfinibandDevice> devices;
  for (const auto& name : names) {
    sysfs::InfinibandDevice device;
    device.name = name;
    devices.push_back(device);
  }
  return devices;
}

const std::vector<std::string> kHgxNics = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3",
                                           "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"};

// tests/fixtures/hgx-8gpu/README.md, row by row: GPU address, then its path to mlx5_0..mlx5_7.
const std::vector<std::pair<std::string, std::vector<std::string>>> kHgxMatrix = {
    {"0000:03:00.0", {"PIX", "PIX", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS"}},
    {"0000:04:00.0", {"PIX", "PIX", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS"}},
    {"0000:12:00.0", {"PHB", "PHB", "PIX", "PIX", "SYS", "SYS", "SYS", "SYS"}},
    {"0000:13:00.0", {"PHB", "PHB", "PIX", "PIX", "SYS", "SYS", "SYS", "SYS"}},
    {"0000:83:00.0", {"SYS", "SYS", "SYS", "SYS", "PIX", "PIX", "NODE", "NODE"}},
    {"0000:84:00.0", {"SYS", "SYS", "SYS", "SYS", "PIX", "PIX", "NODE", "NODE"}},
    {"0000:c3:00.0", {"SYS", "SYS", "SYS", "SYS", "NODE", "NODE", "PIX", "PIX"}},
    {"0000:c4:00.0", {"SYS", "SYS", "SYS", "SYS", "NODE", "NODE", "PIX", "PIX"}},
};

PcieTopology ReadHgx() {
  sysfs::RootedFilesystem fs(kFixtures + "/hgx-8gpu/sys");
  sysfs::ReadErrors errors;
  auto topology = ReadPcieTopology(fs, Devices(kHgxNics), errors);
  EXPECT_TRUE(errors.empty());
  return topology;
}

TEST(PcieTopologyHgx, EveryGpuNicPairAsTheReadmeMatrixSays) {
  const auto topology = ReadHgx();
  ASSERT_EQ(topology.gpus.size(), 8u);
  ASSERT_EQ(topology.devices.size(), 8u);
  ASSERT_EQ(topology.paths.size(), 64u);
  for (std::size_t g = 0; g < kHgxMatrix.size(); ++g) {
    const auto& [gpu, row] = kHgxMatrix[g];
    EXPECT_EQ(topology.gpus[g].pci_bus_id, gpu);
    for (std::size_t n = 0; n < kHgxNics.size(); ++n) {
      const GpuNicPath* path = FindPath(topology, gpu, kHgxNics[n]);
      ASSERT_NE(path, nullptr) << gpu << " " << kHgxNics[n];
      EXPECT_EQ(PciPathName(path->path), row[n]) << gpu << " x " << kHgxNics[n];
      // GPU-major order.
      EXPECT_EQ(&topology.paths[g * kHgxNics.size() + n], path);
    }
  }
}

TEST(PcieTopologyHgx, GpusAreDiscretePcieGpusWithTheirNumaNodes) {
  const auto topology = ReadHgx();
  for (const auto& gpu : topology.gpus) {
    EXPECT_EQ(gpu.attach, GpuAttach::kPcie) << gpu.pci_bus_id;
    EXPECT_EQ(gpu.device_id, 0x2330u);
    const bool second_socket = gpu.pci_bus_id >= "0000:80";
    EXPECT_THAT(gpu.numa_node, Optional(second_socket ? 1 : 0)) << gpu.pci_bus_id;
    EXPECT_THAT(gpu.link.link.current_width, Optional(16u));
    EXPECT_THAT(gpu.link.attainable_width, Optional(16u));
    EXPECT_THAT(gpu.link.attainable_speed_gts, Optional(32.0));
  }
  // The BMC's VGA (display class, vendor 0x1a03) is no GPU.
  EXPECT_EQ(FindPath(topology, "0000:f1:00.0", "mlx5_0"), nullptr);
}

TEST(PcieTopologyHgx, TheX8NicCouldTrainAtX16) {
  const auto topology = ReadHgx();
  for (const auto& device : topology.devices) {
    const bool narrow = device.device == "mlx5_5";
    EXPECT_THAT(device.link.link.current_width, Optional(narrow ? 8u : 16u)) << device.device;
    EXPECT_THAT(device.link.attainable_width, Optional(16u)) << device.device;
    EXPECT_THAT(device.link.link.current_speed_gts, Optional(32.0)) << device.device;
    EXPECT_THAT(device.link.attainable_speed_gts, Optional(32.0)) << device.device;
  }
  EXPECT_EQ(topology.devices[5].pci_bus_id, "0000:86:00.0");
}

TEST(PcieTopologyHgx, NearestEnds) {
  const auto topology = ReadHgx();
  const RdmaPciDevice* nic = NearestDevice(topology, "0000:84:00.0");
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->device, "mlx5_4");  // PIX with mlx5_4 and mlx5_5: the first by name
  const Gpu* gpu = NearestGpu(topology, "mlx5_6");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->pci_bus_id, "0000:c3:00.0");
  EXPECT_EQ(NearestGpu(topology, "mlx5_9"), nullptr);
  EXPECT_EQ(NearestDevice(topology, "0000:ff:00.0"), nullptr);
}

TEST(PcieTopologySpark, IntegratedGb10IsC2cAndNodeFromEveryNic) {
  sysfs::RootedFilesystem sys(kFixtures + "/spark-dual-rail/sys");
  sysfs::RootedFilesystem proc(kFixtures + "/spark-dual-rail/proc");
  Sources sources;
  sources.sys = &sys;
  sources.proc = &proc;
  sysfs::ReadErrors errors;
  Snapshot snapshot(sources, errors);
  const auto& topology = snapshot.Topology();
  ASSERT_EQ(topology.gpus.size(), 1u);
  const Gpu& gb10 = topology.gpus[0];
  EXPECT_EQ(gb10.pci_bus_id, "000f:01:00.0");
  EXPECT_EQ(gb10.device_id, 0x2e12u);
  EXPECT_EQ(gb10.attach, GpuAttach::kC2c);
  EXPECT_FALSE(gb10.numa_node.has_value());                    // numa_node -1
  EXPECT_FALSE(gb10.link.link.current_speed_gts.has_value());  // "Unknown"
  // Neither the GB10 nor its root port reports a link (NVLink-C2C is not PCIe).
  EXPECT_FALSE(gb10.link.attainable_speed_gts.has_value());
  EXPECT_FALSE(gb10.link.attainable_width.has_value());

  std::vector<std::string> names;
  std::vector<std::string> addresses;
  for (const auto& device : topology.devices) {
    names.push_back(device.device);
    addresses.push_back(device.pci_bus_id);
    // Gen5 x4 in x4 root ports: healthy although the ConnectX-7 itself could do x16.
    EXPECT_THAT(device.link.link.current_width, Optional(4u)) << device.device;
    EXPECT_THAT(device.link.link.max_width, Optional(16u)) << device.device;
    EXPECT_THAT(device.link.attainable_width, Optional(4u)) << device.device;
    EXPECT_THAT(device.link.link.current_speed_gts, Optional(32.0)) << device.device;
    EXPECT_THAT(device.link.attainable_speed_gts, Optional(32.0)) << device.device;
  }
  EXPECT_THAT(names, ElementsAre("roceP2p1s0f0", "roceP2p1s0f1", "rocep1s0f0", "rocep1s0f1"));
  EXPECT_THAT(addresses,
              ElementsAre("0002:01:00.0", "0002:01:00.1", "0000:01:00.0", "0000:01:00.1"));
  ASSERT_EQ(topology.paths.size(), 4u);
  for (const auto& path : topology.paths) {
    EXPECT_EQ(path.pci_bus_id, "000f:01:00.0");
    EXPECT_EQ(path.path, PciPath::kNode) << path.device;
  }
  // The Spark has no peer memory client: GPUDirect there is dma-buf or nothing.
  EXPECT_FALSE(snapshot.PeerMemory().nv_mem_version.has_value());
  EXPECT_FALSE(snapshot.PeerMemory().nvidia_peermem_loaded);
  EXPECT_TRUE(errors.empty());
}

TEST(PcieTopology, GpusWithoutRdmaDevices) {
  sysfs::RootedFilesystem fs(kFixtures + "/hgx-8gpu/sys");
  sysfs::ReadErrors errors;
  const auto topology = ReadPcieTopology(fs, {}, errors);
  EXPECT_EQ(topology.gpus.size(), 8u);
  EXPECT_THAT(topology.devices, IsEmpty());
  EXPECT_THAT(topology.paths, IsEmpty());
  EXPECT_EQ(NearestDevice(topology, "0000:03:00.0"), nullptr);
}

TEST(PcieTopology, DevicesWithoutPciFunctionsHaveNoPaths) {
  test::FakeFilesystem fs;
  fs.AddFile("class/infiniband/rxe0/ports/1/state", "4: ACTIVE\n");
  sysfs::ReadErrors errors;
  const auto topology = ReadPcieTopology(fs, Devices({"rxe0"}), errors);
  EXPECT_THAT(topology.gpus, IsEmpty());
  EXPECT_THAT(topology.devices, IsEmpty());
  EXPECT_THAT(topology.paths, IsEmpty());
  EXPECT_TRUE(errors.empty());
}

sysfs::PciFunction Function(const std::string& root_complex, std::vector<std::string> chain,
                            std::optional<int> numa_node = 0) {
  sysfs::PciFunction function;
  function.address = chain.back();
  function.root_complex = root_complex;
  function.chain = std::move(chain);
  function.numa_node = numa_node;
  return function;
}

// A two-level tree under one root port: top switch t (upstream 01:00.0, downstream 02:0x.0), leaf
// switches under it (upstream 03:00.0 / 06:00.0, downstream 04:0x.0 / 07:0x.0).
const std::string kRoot = "0000:00:01.0";
const sysfs::PciFunction kGpuLeafA = Function(
    "pci0000:00",
    {kRoot, "0000:01:00.0", "0000:02:00.0", "0000:03:00.0", "0000:04:00.0", "0000:05:00.0"});
const sysfs::PciFunction kNicLeafA = Function(
    "pci0000:00",
    {kRoot, "0000:01:00.0", "0000:02:00.0", "0000:03:00.0", "0000:04:01.0", "0000:08:00.0"});
const sysfs::PciFunction kNicLeafB = Function(
    "pci0000:00",
    {kRoot, "0000:01:00.0", "0000:02:01.0", "0000:06:00.0", "0000:07:00.0", "0000:09:00.0"});
const sysfs::PciFunction kNicUnderTop =
    Function("pci0000:00", {kRoot, "0000:01:00.0", "0000:02:02.0", "0000:0a:00.0"});

TEST(PathBetween, CountsSwitchesNotBridges) {
  EXPECT_EQ(PathBetween(kGpuLeafA, kNicLeafA), PciPath::kPix);     // one leaf switch
  EXPECT_EQ(PathBetween(kGpuLeafA, kNicLeafB), PciPath::kPxb);     // leaf, top, leaf
  EXPECT_EQ(PathBetween(kGpuLeafA, kNicUnderTop), PciPath::kPxb);  // leaf, top
  EXPECT_EQ(PathBetween(kNicLeafB, kGpuLeafA), PciPath::kPxb);     // symmetric
}

TEST(PathBetween, HostBridgeAndRootPort) {
  const auto other_root_port =
      Function("pci0000:00", {"0000:00:02.0", "0000:20:00.0", "0000:21:00.0", "0000:22:00.0"});
  EXPECT_EQ(PathBetween(kGpuLeafA, other_root_port), PciPath::kPhb);
  // Two functions that meet at one root port (index 0) only.
  const auto a = Function("pci0000:00", {kRoot, "0000:01:00.0"});
  const auto b = Function("pci0000:00", {kRoot, "0000:01:01.0"});
  EXPECT_EQ(PathBetween(a, b), PciPath::kPhb);
}

TEST(PathBetween, FunctionsOfOneDeviceArePix) {
  const auto port0 = Function("pci0000:00", {kRoot, "0000:01:00.0"});
  const auto port1 = Function("pci0000:00", {kRoot, "0000:01:00.1"});
  EXPECT_EQ(PathBetween(port0, port1), PciPath::kPix);
  // Even where no link says where they sit.
  EXPECT_EQ(PathBetween(Function("", {"0000:01:00.0"}), Function("", {"0000:01:00.1"})),
            PciPath::kPix);
}

TEST(PathBetween, RootComplexesByNumaNode) {
  const auto node0 = Function("pci0000:00", {"0000:00:01.0", "0000:01:00.0"}, 0);
  const auto node0_other = Function("pci0000:40", {"0000:40:01.0", "0000:41:00.0"}, 0);
  const auto node1 = Function("pci0000:80", {"0000:80:01.0", "0000:81:00.0"}, 1);
  const auto unknown = Function("pci0000:c0", {"0000:c0:01.0", "0000:c1:00.0"}, std::nullopt);
  EXPECT_EQ(PathBetween(node0, node0_other), PciPath::kNode);
  EXPECT_EQ(PathBetween(node0, node1), PciPath::kSys);
  EXPECT_EQ(PathBetween(node1, unknown), PciPath::kNode);
  // No link to read the root complex from: judged by NUMA node alone.
  EXPECT_EQ(PathBetween(Function("", {"0000:01:00.0"}, 0), Function("", {"0000:81:00.0"}, 1)),
            PciPath::kSys);
}

TEST(PciPathNames, RoundTripAndOrder) {
  for (const PciPath path :
       {PciPath::kPix, PciPath::kPxb, PciPath::kPhb, PciPath::kNode, PciPath::kSys}) {
    EXPECT_THAT(ParsePciPath(PciPathName(path)), Optional(path));
  }
  EXPECT_FALSE(ParsePciPath("pix").has_value());
  EXPECT_FALSE(ParsePciPath("NV12").has_value());
  EXPECT_LT(PciPath::kPxb, PciPath::kPhb);  // "beyond PXB" is path > kPxb
  EXPECT_STREQ(GpuAttachName(GpuAttach::kC2c), "c2c");
  EXPECT_STREQ(GpuAttachName(GpuAttach::kPcie), "pcie");
}

}  // namespace
}  // namespace rail::inventory
