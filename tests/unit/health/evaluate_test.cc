// EvaluateChecks as a whole: stable order, and a healthy host passing everything it checks.
#include <gmock/gmock.h>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

TEST(EvaluateChecksTest, OrderIsCheckThenRailThenPeer) {
  HostConfig config;
  config.rails = {DeviceRail("z_first", "rocep1s0f1"), DeviceRail("a_second", "rocep1s0f0")};
  Host host("spark-dual-rail", config);
  host.AddResult(probe::ProbeKind::kUcxRtt, {"a_second"}, 0, "peer2");
  host.AddResult(probe::ProbeKind::kUcxRtt, {"z_first"}, 0, "peer1");
  const auto results = host.Evaluate();
  std::vector<std::string> order;
  for (const auto& result : results) {
    order.push_back(result.check + "/" + result.rail + "/" + result.peer);
  }
  EXPECT_THAT(order,
              ::testing::ElementsAre(
                  "port_active/z_first/", "port_active/a_second/", "port_rate/z_first/",
                  "port_rate/a_second/", "roce_gid/z_first/", "roce_gid/a_second/", "mtu/z_first/",
                  "mtu/a_second/", "peer_version//peer1", "peer_version//peer2",
                  "counter_saturated/z_first/", "counter_saturated/a_second/",
                  "transport_fallback/z_first/peer1", "transport_fallback/a_second/peer2",
                  "probe_failing/z_first/peer1", "probe_failing/a_second/peer2"));
}

TEST(EvaluateChecksTest, HealthyDualRailHostPassesEverything) {
  HostConfig config;
  config.rails = {DeviceRail("rail0", "rocep1s0f0"), DeviceRail("rail1", "rocep1s0f1")};
  config.rails[0].expected_rate_gbps = 100;
  config.rails[1].expected_rate_gbps = 100;
  Host host("spark-dual-rail", config);
  host.addresses = {{"enp1s0f0np0", "192.168.100.11", 24}, {"enp1s0f1np1", "192.168.200.11", 24}};
  for (const auto& results = host.Evaluate(); const auto& result : results) {
    EXPECT_TRUE(result.ok) << result.check << " " << result.rail << ": " << result.reason;
  }
}

TEST(EvaluateChecksTest, EmptyInputsGiveNoVerdicts) {
  EXPECT_TRUE(EvaluateChecks(HealthInputs{}).empty());
}

TEST(ReadInterfaceAddressesTest, LoopbackHasItsAddress) {
  const auto addresses = ReadInterfaceAddresses();
  const bool loopback = std::any_of(addresses.begin(), addresses.end(), [](const auto& address) {
    return address.ifname == "lo" && address.address == "127.0.0.1" && address.prefix_length == 8;
  });
  if (addresses.empty()) GTEST_SKIP() << "this network namespace has no IPv4 address";
  EXPECT_TRUE(loopback);
}

}  // namespace
}  // namespace rail::health::test
