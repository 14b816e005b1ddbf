// port_active and port_rate on fixture trees.
#include <gmock/gmock.h>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;

TEST(PortActiveTest, ActivePortsPass) {
  const Host host("spark-dual-rail");
  const auto results = host.Evaluate();
  ASSERT_EQ(host.rails.size(), 4u);
  for (const auto& rail : host.rails) {
    const auto verdict = Find(results, "port_active", rail.name);
    ASSERT_TRUE(verdict) << rail.name;
    EXPECT_TRUE(verdict->ok) << verdict->reason;
    EXPECT_EQ(verdict->reason, "");
  }
}

TEST(PortActiveTest, DownAndMissingPortsFail) {
  HostConfig config;
  config.rails = {DeviceRail("up", "qib0", 1), DeviceRail("down", "qib0", 2),
                  DeviceRail("gone", "mlx5_9", 1)};
  const Host host("quirks", config);
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "port_active", "up")->ok);
  const auto down = Find(results, "port_active", "down");
  EXPECT_FALSE(down->ok);
  EXPECT_THAT(down->reason, HasSubstr("qib0 port 2 is DOWN / Disabled"));
  const auto gone = Find(results, "port_active", "gone");
  EXPECT_FALSE(gone->ok);
  EXPECT_THAT(gone->reason, HasSubstr("mlx5_9 port 1 not found under class/infiniband"));
}

TEST(PortActiveTest, NetdevRailFollowsOperstate) {
  HostConfig config;
  RailConfig up;
  up.name = "tcp_up";
  up.netdev = "enp1s0f0np0";
  RailConfig down = up;
  down.name = "tcp_down";
  down.netdev = "eno2";
  RailConfig missing = up;
  missing.name = "tcp_missing";
  missing.netdev = "veth9";
  config.rails = {up, down, missing};
  Host host("quirks", config);
  // quirks has eno2 (down) and ib0; borrow an "up" netdev.
  sysfs::NetDevice up_device;
  up_device.name = "enp1s0f0np0";
  up_device.operstate = "up";
  host.net_devices.push_back(up_device);
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "port_active", "tcp_up")->ok);
  EXPECT_THAT(Find(results, "port_active", "tcp_down")->reason,
              HasSubstr("netdev eno2 is down (class/net/eno2/operstate)"));
  EXPECT_THAT(Find(results, "port_active", "tcp_missing")->reason,
              HasSubstr("netdev veth9 not found"));
}

TEST(PortRateTest, BelowTheExpectedRateFails) {
  HostConfig config;
  config.rails = {DeviceRail("fast", "rocep1s0f0"), DeviceRail("slow", "rocep1s0f1")};
  config.rails[0].expected_rate_gbps = 100;
  config.rails[1].expected_rate_gbps = 200;
  const Host host("spark-dual-rail", config);
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "port_rate", "fast")->ok);
  const auto slow = Find(results, "port_rate", "slow");
  EXPECT_FALSE(slow->ok);
  EXPECT_EQ(slow->reason,
            "rocep1s0f1 port 1 runs at 100 Gb/s (2X HDR) (ports/1/rate), below the expected "
            "200 Gb/s");
}

TEST(PortRateTest, NoExpectationPasses) {
  // quirks' qib0 port 2 runs at 2.5 Gb/s next to a 40 Gb/s port: without a configured
  // expectation that is no finding.
  HostConfig config;
  config.rails = {DeviceRail("a", "qib0", 1), DeviceRail("b", "qib0", 2)};
  const Host host("quirks", config);
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "port_rate", "a")->ok);
  EXPECT_TRUE(Find(results, "port_rate", "b")->ok);
}

TEST(PortRateTest, NetdevRailUsesTheNetdevSpeed) {
  HostConfig config;
  RailConfig rail;
  rail.name = "tcp0";
  rail.netdev = "enp1s0f0np0";
  rail.expected_rate_gbps = 400;
  config.rails = {rail};
  const Host host("spark-dual-rail", config);
  const auto verdict = Find(host.Evaluate(), "port_rate", "tcp0");
  EXPECT_FALSE(verdict->ok);
  EXPECT_THAT(verdict->reason, HasSubstr("class/net/enp1s0f0np0/speed), below the expected 400"));
}

}  // namespace
}  // namespace rail::health::test
