#include "rail/sysfs/pci.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/fake_filesystem.h"
#include "support/fixture_paths.h"

namespace rail::sysfs {
namespace {

using test::FakeFilesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

using rail::test::kFixtures;
const std::string kHgx = kFixtures + "/hgx-8gpu/sys";
using rail::test::kSparkSys;

FakeFilesystem FakeFunction(const std::string& address, const std::string& speed,
                            const std::string& width, const std::string& numa) {
  FakeFilesystem fs;
  const std::string dir = "bus/pci/devices/" + address + "/";
  fs.AddFile(dir + "vendor", "0x10de\n")
      .AddFile(dir + "device", "0x2330\n")
      .AddFile(dir + "class", "0x030200\n")
      .AddFile(dir + "numa_node", numa + "\n")
      .AddFile(dir + "current_link_speed", speed + "\n")
      .AddFile(dir + "max_link_speed", speed + "\n")
      .AddFile(dir + "current_link_width", width + "\n")
      .AddFile(dir + "max_link_width", width + "\n");
  return fs;
}

TEST(PciFunction, ParsesSpeedsWithAndWithoutThePcieSuffix) {
  for (const auto& [text, gts] :
       std::vector<std::pair<std::string, double>>{{"32.0 GT/s PCIe", 32.0},
                                                   {"2.5 GT/s", 2.5},
                                                   {"16.0 GT/s PCIe", 16.0},
                                                   {"8 GT/s", 8.0}}) {
    const auto fs = FakeFunction("0000:17:00.0", text, "16", "0");
    ReadErrors errors;
    const auto function = ReadPciFunction(fs, "0000:17:00.0", errors);
    ASSERT_TRUE(function.has_value());
    EXPECT_THAT(function->link.current_speed_gts, Optional(gts)) << text;
    EXPECT_THAT(function->link.max_speed_gts, Optional(gts)) << text;
    EXPECT_TRUE(errors.empty()) << text;
  }
}

TEST(PciFunction, UnknownSpeedAndNoAffinityAreNoErrors) {
  const auto fs = FakeFunction("0000:17:00.0", "Unknown", "16", "-1");
  ReadErrors errors;
  const auto function = ReadPciFunction(fs, "0000:17:00.0", errors);
  ASSERT_TRUE(function.has_value());
  EXPECT_FALSE(function->link.current_speed_gts.has_value());
  EXPECT_FALSE(function->numa_node.has_value());
  EXPECT_THAT(function->link.current_width, Optional(16u));
  EXPECT_THAT(function->vendor, Optional(kPciVendorNvidia));
  EXPECT_THAT(function->device_id, Optional(0x2330u));
  EXPECT_THAT(function->class_code, Optional(0x030200u));
  EXPECT_TRUE(errors.empty());
}

TEST(PciFunction, MalformedValuesAreCountedAndSkipped) {
  const auto fs = FakeFunction("0000:17:00.0", "fast", "sixteen", "zero");
  ReadErrors errors;
  const auto function = ReadPciFunction(fs, "0000:17:00.0", errors);
  ASSERT_TRUE(function.has_value());
  EXPECT_FALSE(function->link.current_speed_gts.has_value());
  EXPECT_FALSE(function->link.current_width.has_value());
  EXPECT_FALSE(function->numa_node.has_value());
  EXPECT_EQ(errors.Count(ReadFailure::kMalformed), 5u);  // 2 speeds, 2 widths, numa_node
}

TEST(PciFunction, MissingFunctionIsNullopt) {
  FakeFilesystem fs;
  ReadErrors errors;
  EXPECT_FALSE(ReadPciFunction(fs, "0000:17:00.0", errors).has_value());
  EXPECT_TRUE(errors.empty());
}

TEST(PciFunction, WithoutLinksTheChainIsTheFunctionAlone) {
  const auto fs = FakeFunction("0000:17:00.0", "32.0 GT/s PCIe", "16", "0");
  ReadErrors errors;
  const auto function = ReadPciFunction(fs, "0000:17:00.0", errors);
  ASSERT_TRUE(function.has_value());
  EXPECT_EQ(function->root_complex, "");
  EXPECT_THAT(function->chain, ElementsAre("0000:17:00.0"));
}

TEST(PciFunction, ChainFollowsTheResolvedLink) {
  RootedFilesystem fs(kHgx);
  ReadErrors errors;
  const auto nic = ReadPciFunction(fs, "0000:86:00.0", errors);
  ASSERT_TRUE(nic.has_value());
  EXPECT_EQ(nic->root_complex, "pci0000:80");
  EXPECT_THAT(nic->chain,
              ElementsAre("0000:80:01.0", "0000:81:00.0", "0000:82:03.0", "0000:86:00.0"));
  EXPECT_THAT(nic->vendor, Optional(kPciVendorMellanox));
  EXPECT_THAT(nic->numa_node, Optional(1));
  EXPECT_THAT(nic->link.current_width, Optional(8u));
  EXPECT_THAT(nic->link.max_width, Optional(16u));
  EXPECT_THAT(nic->link.current_speed_gts, Optional(32.0));
  EXPECT_TRUE(errors.empty());
}

TEST(PciFunctions, ReadsOnlyVendorAndClassOfFunctionsNotWanted) {
  FakeFilesystem fs(kHgx);
  ReadErrors errors;
  const auto gpus = ReadPciFunctions(fs, errors, [](std::uint32_t vendor, std::uint32_t klass) {
    return vendor == kPciVendorNvidia && IsDisplayClass(klass);
  });
  std::vector<std::string> addresses;
  for (const auto& gpu : gpus) addresses.push_back(gpu.address);
  EXPECT_THAT(addresses,
              ElementsAre("0000:03:00.0", "0000:04:00.0", "0000:12:00.0", "0000:13:00.0",
                          "0000:83:00.0", "0000:84:00.0", "0000:c3:00.0", "0000:c4:00.0"));
  for (const auto& read : fs.reads()) {
    const bool gpu = std::any_of(addresses.begin(), addresses.end(), [&](const std::string& a) {
      return read.find(a) != std::string::npos;
    });
    if (gpu) continue;
    EXPECT_TRUE(read.ends_with("/vendor") || read.ends_with("/class")) << read;
  }
  EXPECT_TRUE(errors.empty());
}

TEST(PciFunctions, OnlyVendorSkipsTheClassOfOtherVendors) {
  FakeFilesystem fs(kHgx);
  ReadErrors errors;
  std::vector<std::uint32_t> vendors_asked;
  const auto nvidia = ReadPciFunctions(
      fs, errors,
      [&](std::uint32_t vendor, std::uint32_t) {
        vendors_asked.push_back(vendor);
        return true;
      },
      kPciVendorNvidia);
  EXPECT_EQ(nvidia.size(), 8u);
  EXPECT_EQ(vendors_asked, std::vector<std::uint32_t>(8, kPciVendorNvidia));
  for (const auto& read : fs.reads()) {
    if (read.ends_with("/class")) {
      EXPECT_TRUE(std::any_of(nvidia.begin(), nvidia.end(), [&](const PciFunction& gpu) {
        return read.find(gpu.address) != std::string::npos;
      })) << read;
    }
  }
}

TEST(PciLinkOnly, ReadsABridgesLink) {
  RootedFilesystem fs(kHgx);
  ReadErrors errors;
  const PciLink port = ReadPciLink(fs, "0000:82:03.0", errors);  // mlx5_5's downstream port
  EXPECT_THAT(port.max_width, Optional(16u));
  EXPECT_THAT(port.max_speed_gts, Optional(32.0));
  const PciLink none = ReadPciLink(fs, "0000:ee:00.0", errors);
  EXPECT_FALSE(none.max_width.has_value());
  EXPECT_FALSE(none.current_speed_gts.has_value());
  EXPECT_TRUE(errors.empty());
}

TEST(PciFunctions, NoBusDirectoryIsNoError) {
  FakeFilesystem fs;
  ReadErrors errors;
  EXPECT_THAT(ReadPciFunctions(fs, errors, [](auto, auto) { return true; }), IsEmpty());
  EXPECT_TRUE(errors.empty());
}

TEST(PciFunctions, DisplayClassIsVgaOr3d) {
  EXPECT_TRUE(IsDisplayClass(0x030000));   // VGA
  EXPECT_TRUE(IsDisplayClass(0x030200));   // 3D controller (data-center GPUs)
  EXPECT_FALSE(IsDisplayClass(0x030100));  // XGA
  EXPECT_FALSE(IsDisplayClass(0x020700));  // InfiniBand controller
  EXPECT_FALSE(IsDisplayClass(0x060400));  // PCI bridge
}

TEST(InfinibandPci, ResolvesTheDeviceLink) {
  RootedFilesystem hgx(kHgx);
  EXPECT_THAT(InfinibandPciAddress(hgx, "mlx5_5"), Optional(std::string("0000:86:00.0")));
  RootedFilesystem spark(kSparkSys);
  EXPECT_THAT(InfinibandPciAddress(spark, "roceP2p1s0f1"), Optional(std::string("0002:01:00.1")));
  EXPECT_FALSE(InfinibandPciAddress(spark, "mlx5_9").has_value());
}

TEST(InfinibandPci, NoPciParentIsNullopt) {
  // bonded-roce keeps device/ as a plain directory, as a fixture without links does.
  RootedFilesystem bonded(kFixtures + "/bonded-roce/sys");
  std::vector<std::string> names;
  ASSERT_EQ(bonded.ListDirectory("class/infiniband", &names), 0);
  ASSERT_FALSE(names.empty());
  EXPECT_FALSE(InfinibandPciAddress(bonded, names.front()).has_value());
  FakeFilesystem fake;
  fake.AddFile("class/infiniband/rxe0/device/net/eth0", "");
  EXPECT_FALSE(InfinibandPciAddress(fake, "rxe0").has_value());
}

TEST(PeerMemory, ReadsTheHgxFixture) {
  RootedFilesystem sys(kHgx);
  RootedFilesystem proc(kFixtures + "/hgx-8gpu/proc");
  ReadErrors errors;
  const auto state = ReadPeerMemoryState(sys, proc, errors);
  EXPECT_THAT(state.nv_mem_version, Optional(std::string("1.3-0")));
  EXPECT_TRUE(state.nvidia_peermem_loaded);
  EXPECT_THAT(state.kernel_release, Optional(std::string("5.15.0-119-generic")));
  EXPECT_FALSE(state.nvidia_open_modules);  // the proprietary "Kernel Module"
  EXPECT_TRUE(errors.empty());
}

TEST(PeerMemory, NoCacheCoherenceClientAndOpenModules) {
  FakeFilesystem sys;
  sys.AddFile("kernel/mm/memory_peers/nv_mem_nc/version", "1.0-9\n");
  FakeFilesystem proc;
  proc.AddFile("driver/nvidia/version",
               "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05\n");
  ReadErrors errors;
  const auto state = ReadPeerMemoryState(sys, proc, errors);
  EXPECT_THAT(state.nv_mem_version, Optional(std::string("1.0-9")));
  EXPECT_FALSE(state.nvidia_peermem_loaded);
  EXPECT_FALSE(state.kernel_release.has_value());
  EXPECT_TRUE(state.nvidia_open_modules);
}

TEST(PeerMemory, NothingPresentIsNoError) {
  FakeFilesystem sys;
  FakeFilesystem proc;
  ReadErrors errors;
  const auto state = ReadPeerMemoryState(sys, proc, errors);
  EXPECT_FALSE(state.nv_mem_version.has_value());
  EXPECT_FALSE(state.nvidia_peermem_loaded);
  EXPECT_FALSE(state.nvidia_open_modules);
  EXPECT_TRUE(errors.empty());
}

}  // namespace
}  // namespace rail::sysfs
