#include "rail/inventory/rails.h"

#include <gtest/gtest.h>

#include "rail/sysfs/filesystem.h"

namespace rail::inventory {
namespace {

// The rails: and discover_rails: sections of a configuration.
struct RailsSection {
  std::vector<RailConfig> rails;
  std::optional<bool> discover_rails;
};

std::vector<Rail> Discover(const std::vector<sysfs::InfinibandDevice>& devices,
                           const RailsSection& config) {
  return DiscoverRails(devices, config.rails,
                       DiscoverUnlisted(config.rails, config.discover_rails));
}

std::vector<sysfs::InfinibandDevice> SparkDevices() {
  sysfs::RootedFilesystem sys(std::string(RAIL_FIXTURES) + "/spark-dual-rail/sys");
  sysfs::ReadErrors errors;
  sysfs::InfinibandReadOptions options;
  return sysfs::ReadInfiniband(sys, options, errors);
}

RailConfig Configured(const std::string& name, std::optional<std::string> device,
                      std::optional<std::string> netdev = std::nullopt) {
  RailConfig rail;
  rail.name = name;
  rail.device = std::move(device);
  rail.netdev = std::move(netdev);
  return rail;
}

const Rail* Find(const std::vector<Rail>& rails, const std::string& name) {
  for (const auto& rail : rails) {
    if (rail.name == name) return &rail;
  }
  return nullptr;
}

TEST(RailsTest, DiscoversEveryActivePortWithNetdevAndIpv4) {
  const auto rails = Discover(SparkDevices(), RailsSection{});
  ASSERT_EQ(rails.size(), 4u);
  const Rail* rail0 = Find(rails, "rocep1s0f0:1");
  ASSERT_NE(rail0, nullptr);
  EXPECT_EQ(rail0->netdev, "enp1s0f0np0");
  EXPECT_EQ(rail0->ipv4, "192.168.100.11");
  EXPECT_EQ(rail0->roce_v2_gid_index, 3u) << "mlx5 lists RoCE v1 and v2 of each address";
  EXPECT_EQ(rail0->link_layer, "Ethernet");
  EXPECT_TRUE(rail0->active);
  EXPECT_EQ(rail0->source, RailSource::kDiscovered);
  const Rail* rail1 = Find(rails, "rocep1s0f1:1");
  ASSERT_NE(rail1, nullptr);
  EXPECT_EQ(rail1->ipv4, "192.168.200.11");
}

TEST(RailsTest, ConfiguredRailsRenameAndRestrict) {
  RailsSection config;
  config.rails.push_back(Configured("rail0", "rocep1s0f0"));
  config.rails.back().port = 1;
  config.rails.push_back(Configured("rail1", "rocep1s0f1"));
  config.rails.back().expected_rate_gbps = 100;
  const auto rails = Discover(SparkDevices(), config);
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_EQ(rails[0].name, "rail0");
  EXPECT_EQ(rails[0].netdev, "enp1s0f0np0");
  EXPECT_EQ(rails[0].source, RailSource::kConfigured);
  EXPECT_EQ(rails[1].name, "rail1");
  EXPECT_EQ(rails[1].port, 1u);
  EXPECT_EQ(rails[1].transport, TransportClass::kRdma);
  EXPECT_DOUBLE_EQ(*rails[1].expected_rate_gbps, 100.0);
}

TEST(RailsTest, DiscoveryAddsUnlistedPortsOnlyWhenAsked) {
  RailsSection config;
  config.rails.push_back(Configured("rail0", "rocep1s0f0"));
  config.discover_rails = true;
  const auto rails = Discover(SparkDevices(), config);
  EXPECT_EQ(rails.size(), 4u);
  EXPECT_EQ(rails[0].name, "rail0");
  EXPECT_EQ(Find(rails, "rocep1s0f0:1"), nullptr) << "a configured port is not listed twice";
}

TEST(RailsTest, MissingOrDownConfiguredRailStaysVisible) {
  auto devices = SparkDevices();
  for (auto& device : devices) {
    if (device.name == "rocep1s0f1") device.ports[0].state = sysfs::NumberedState{1, "DOWN"};
  }
  RailsSection config;
  config.rails.push_back(Configured("gone", "mlx5_9"));
  config.rails.push_back(Configured("down", "rocep1s0f1"));
  const auto rails = Discover(devices, config);
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_FALSE(rails[0].present);
  EXPECT_FALSE(rails[0].active);
  EXPECT_TRUE(rails[1].present);
  EXPECT_FALSE(rails[1].active);
  EXPECT_EQ(rails[1].netdev, "enp1s0f1np1");
}

TEST(RailsTest, NetdevOnlyRailIsTcp) {
  RailsSection config;
  config.rails.push_back(Configured("lab0", std::nullopt, "ra0"));
  config.rails.back().ipv4 = "10.200.0.1";
  const auto rails = Discover({}, config);
  ASSERT_EQ(rails.size(), 1u);
  EXPECT_EQ(rails[0].transport, TransportClass::kTcp);
  EXPECT_EQ(rails[0].netdev, "ra0");
  EXPECT_EQ(rails[0].ipv4, "10.200.0.1");
  EXPECT_TRUE(rails[0].device.empty());
}

TEST(RailsTest, PortNetdevFallsBackToDeviceNetdevs) {
  sysfs::InfinibandDevice device;
  device.name = "mlx5_0";
  device.netdevs = {"ib0", "ib1"};
  sysfs::InfinibandPort port;
  port.number = 2;
  EXPECT_EQ(PortNetdev(device, port), "ib1");
  device.netdevs = {"eth4"};
  EXPECT_EQ(PortNetdev(device, port), "eth4");
  device.netdevs.clear();
  EXPECT_EQ(PortNetdev(device, port), "");
}

}  // namespace
}  // namespace rail::inventory
