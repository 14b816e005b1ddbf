#include "rail/web/landing_page.h"

#include <gtest/gtest.h>

#include <optional>

#include "rail/sysfs/filesystem.h"

namespace rail::web {
namespace {

using namespace std::chrono_literals;

std::vector<sysfs::InfinibandDevice> SparkDevices() {
  sysfs::RootedFilesystem sys(std::string(RAIL_FIXTURES) + "/spark-dual-rail/sys");
  sysfs::ReadErrors errors;
  return sysfs::ReadInfiniband(sys, sysfs::InfinibandReadOptions{}, errors);
}

probe::SeriesState Series(const std::string& kind, const std::string& rail, bool success,
                          std::chrono::system_clock::time_point finished) {
  probe::SeriesState state;
  state.key = {kind, "peer-b:9841", rail, 1 << 20};
  state.last.success = success;
  state.last.finished_at = finished;
  state.last.rails = {rail};
  return state;
}

const LandingRailRow& Row(const std::vector<LandingRailRow>& rows, const std::string& rail) {
  for (const auto& row : rows) {
    if (row.rail == rail) return row;
  }
  throw std::runtime_error("no row for " + rail);
}

TEST(LandingRowsTest, ShowsStateSpeedAndTheRoceV2GidOfEveryRail) {
  const auto devices = SparkDevices();
  const auto rails =
      inventory::DiscoverRails(devices, {}, inventory::DiscoverUnlisted({}, std::nullopt));
  const auto rows = BuildLandingRows(rails, devices, {}, {}, {}, {});
  ASSERT_EQ(rows.size(), rails.size());
  const auto& row = Row(rows, "rocep1s0f0:1");
  EXPECT_EQ(row.device, "rocep1s0f0:1");
  EXPECT_EQ(row.netdev, "enp1s0f0np0");
  EXPECT_EQ(row.state, "active");
  EXPECT_TRUE(row.healthy_state);
  EXPECT_NE(row.speed.find("Gb/sec"), std::string::npos) << row.speed;
  EXPECT_NE(row.roce_gid.find("ffff:c0a8:640b"), std::string::npos) << row.roce_gid;
  EXPECT_NE(row.roce_gid.find("RoCE v2"), std::string::npos);
  EXPECT_EQ(row.ipv4, "192.168.100.11");
  EXPECT_FALSE(row.throughput_bytes_per_second);
}

TEST(LandingRowsTest, AConfiguredRailWhoseDeviceIsMissingSaysSo) {
  std::vector<inventory::RailConfig> configured;
  inventory::RailConfig gone;
  gone.name = "rail9";
  gone.device = "mlx5_9";
  configured.push_back(gone);
  const auto devices = SparkDevices();
  const auto rows = BuildLandingRows(
      inventory::DiscoverRails(devices, configured,
                               inventory::DiscoverUnlisted(configured, std::nullopt)),
      devices, {}, {}, {}, {});
  const auto& row = Row(rows, "rail9");
  EXPECT_EQ(row.state, "missing");
  EXPECT_FALSE(row.healthy_state);
}

TEST(LandingRowsTest, NetdevRailsShowTheirOperstate) {
  inventory::Rail rail;
  rail.name = "lab0";
  rail.netdev = "ra0";
  sysfs::NetDevice up;
  up.name = "ra0";
  up.operstate = "up";
  up.speed_mbps = 10000;
  auto rows = BuildLandingRows({rail}, {}, {up}, {}, {}, {});
  EXPECT_EQ(rows[0].state, "netdev up");
  EXPECT_TRUE(rows[0].healthy_state);
  EXPECT_EQ(rows[0].speed, "10 Gb/sec");
  up.operstate = "down";
  rows = BuildLandingRows({rail}, {}, {up}, {}, {}, {});
  EXPECT_EQ(rows[0].state, "netdev down");
  EXPECT_FALSE(rows[0].healthy_state);
}

TEST(LandingRowsTest, NetdevRailsTakeTheirAddressFromTheirNetdev) {
  inventory::Rail rail;
  rail.name = "lab0";
  rail.netdev = "ra0";
  const std::vector<health::InterfaceAddress> addresses = {{"rb0", "10.200.0.2", 24},
                                                           {"ra0", "10.200.0.1", 24}};
  EXPECT_EQ(BuildLandingRows({rail}, {}, {}, {}, {}, addresses)[0].ipv4, "10.200.0.1");
  rail.ipv4 = "10.9.9.9";  // configured: kept
  EXPECT_EQ(BuildLandingRows({rail}, {}, {}, {}, {}, addresses)[0].ipv4, "10.9.9.9");
}

TEST(LandingRowsTest, TakesTheLatestSuccessfulProbeOfEachKindForTheRail) {
  inventory::Rail rail;
  rail.name = "lab0";
  rail.netdev = "ra0";
  const auto now = std::chrono::system_clock::now();
  auto older = Series("tcp_throughput", "lab0", true, now - 60s);
  older.last.throughput_bytes_per_second = 1e9;
  auto newer = Series("ucx_throughput", "lab0", true, now - 5s);
  newer.last.throughput_bytes_per_second = 2e9;
  newer.last.lanes = {{"tcp", "ra0", "lab0"}, {"tcp", "ra0", "lab0"}, {"sysv", "memory", ""}};
  newer.last.fallback_rails = {"lab0"};
  auto failed = Series("ucx_throughput", "lab0", false, now);
  failed.key.message_size_bytes = 4096;
  failed.last.throughput_bytes_per_second = 5;
  auto rtt = Series("ucx_rtt", "lab0", true, now - 1s);
  rtt.last.rtt = probe::LatencySummary{100, 1e-6, 20e-6, 30e-6, 90e-6, 95e-6, 1e-4};
  auto other_rail = Series("ucx_throughput", "lab1", true, now);
  other_rail.last.throughput_bytes_per_second = 9e9;

  const auto rows =
      BuildLandingRows({rail}, {}, {}, {older, newer, failed, rtt, other_rail}, {}, {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].throughput_bytes_per_second, 2e9);
  EXPECT_EQ(rows[0].throughput_probe, "ucx_throughput 1 MiB to peer-b:9841");
  EXPECT_EQ(rows[0].rtt_p50_seconds, 20e-6);
  EXPECT_EQ(rows[0].rtt_p99_seconds, 90e-6);
  EXPECT_EQ(rows[0].transport, "sysv, tcp (fallback)");
}

TEST(LandingRowsTest, FailingChecksGoToTheirRailOrToTheHost) {
  inventory::Rail rail;
  rail.name = "rail0";
  const std::vector<health::CheckResult> checks = {
      {"roce_gid", "rail0", "", false, "no RoCE v2 GID carries 10.0.0.1"},
      {"mtu", "rail0", "", true, ""},
      {"peer_version", "", "peer-b", false, "peer runs 0.9"},
      {"port_active", "rail7", "", false, "missing"},
  };
  const auto rows = BuildLandingRows({rail}, {}, {}, {}, checks, {});
  ASSERT_EQ(rows[0].failing.size(), 1u);
  EXPECT_EQ(rows[0].failing[0].check, "roce_gid");
  const auto host = HostFailingChecks(rows, checks);
  ASSERT_EQ(host.size(), 2u);
  EXPECT_EQ(host[0].check, "peer_version");
  EXPECT_EQ(host[1].rail, "rail7");
}

TEST(LandingPageTest, RendersOneEscapedRowPerRailWithProbeFiguresAndChecks) {
  LandingPage page;
  page.version = "1.0";
  page.telemetry_path = "/metrics";
  page.has_rdma_devices = true;
  LandingRailRow row;
  row.rail = "rail<0>";
  row.state = "active";
  row.healthy_state = true;
  row.throughput_bytes_per_second = 12.5e9;
  row.rtt_p50_seconds = 4.25e-6;
  row.rtt_p99_seconds = 0.0123;
  row.failing = {{"mtu", "rail<0>", "", false, "MTU 1500 & 9000"}};
  page.rails = {row, row};
  page.host_failing = {{"peer_version", "", "peer-b", false, "peer runs 0.9"}};
  const std::string html = RenderLandingPage(page);
  std::size_t rows = 0;
  for (auto at = html.find("<tr class=\"rail\""); at != std::string::npos;
       at = html.find("<tr class=\"rail\"", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 2u);
  EXPECT_EQ(html.find("rail<0>"), std::string::npos) << "unescaped text";
  EXPECT_NE(html.find("rail&lt;0&gt;"), std::string::npos);
  EXPECT_NE(html.find("100.00 Gbit/s"), std::string::npos);
  EXPECT_NE(html.find("4.2 &micro;s"), std::string::npos);
  EXPECT_NE(html.find("12.30 ms"), std::string::npos);
  EXPECT_NE(html.find("MTU 1500 &amp; 9000"), std::string::npos);
  EXPECT_NE(html.find("peer_version (peer-b): peer runs 0.9"), std::string::npos);
  EXPECT_NE(html.find("http-equiv=\"refresh\""), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos) << "no external assets";
  EXPECT_EQ(html.find("No RDMA device"), std::string::npos);
}

// The switch port sits beside QoS, escaped like everything a neighbour sends.
TEST(LandingPageTest, ShowsEachRailsSwitchPort) {
  LandingPage page;
  page.has_rdma_devices = true;
  LandingRailRow row;
  row.rail = "rail0";
  row.qos = "no DCB (not_supported)";
  row.switch_port = "leaf<0> port Ethernet1/7";
  page.rails = {row};
  const std::string html = RenderLandingPage(page);
  EXPECT_NE(html.find("<th>QoS</th><th>switch port</th><th>fabric</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>no DCB (not_supported)</td><td>leaf&lt;0&gt; port Ethernet1/7</td>"),
            std::string::npos);
}

TEST(LandingPageTest, SaysSoWhenTheHostHasNoRdmaDeviceAndNoRail) {
  LandingPage page;
  page.sysfs_root = "/sys";
  const std::string html = RenderLandingPage(page);
  EXPECT_NE(html.find("No RDMA device found under /sys/class/infiniband"), std::string::npos);
  EXPECT_NE(html.find("id=\"no-rails\""), std::string::npos);
  EXPECT_NE(html.find("No failing host check"), std::string::npos);
}

TEST(LandingRowsTest, FailingChecksCarryTheirFixWithTheRailsNames) {
  inventory::Rail rail;
  rail.name = "rail0";
  rail.netdev = "enp1s0f0np0";
  const std::vector<health::CheckResult> checks = {
      {"mtu", "rail0", "", false, "MTU 1500 on enp1s0f0np0"}};
  const auto rows = BuildLandingRows({rail}, {}, {}, {}, checks, {});
  ASSERT_EQ(rows[0].fixes.size(), 1u);
  EXPECT_EQ(rows[0].fixes[0], "ip link set dev enp1s0f0np0 mtu 9000");
  LandingPage page;
  page.rails = rows;
  EXPECT_NE(RenderLandingPage(page).find("fix: <code>ip link set dev enp1s0f0np0 mtu 9000</code>"),
            std::string::npos);
}

TEST(LandingRowsTest, GpusShowTheirLinkAndNearestRdmaDevice) {
  inventory::PcieTopology topology;
  inventory::Gpu near;
  near.pci_bus_id = "0000:17:00.0";
  near.link.link.current_width = 8;
  near.link.link.current_speed_gts = 2.5;
  near.link.attainable_width = 16;
  inventory::Gpu integrated;
  integrated.pci_bus_id = "000f:01:00.0";
  integrated.attach = inventory::GpuAttach::kC2c;
  topology.gpus = {near, integrated};
  inventory::RdmaPciDevice nic;
  nic.device = "mlx5_0";
  topology.devices = {nic};
  topology.paths = {{"0000:17:00.0", "mlx5_0", inventory::PciPath::kPix},
                    {"000f:01:00.0", "mlx5_0", inventory::PciPath::kSys}};
  const auto rows = BuildLandingGpuRows(topology);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].nearest, "mlx5_0 (PIX)");
  EXPECT_EQ(rows[0].link, "x8 (can x16), 2.5 GT/s now");
  EXPECT_FALSE(rows[0].healthy_link);
  EXPECT_EQ(rows[1].attach, "c2c");
  EXPECT_NE(rows[1].nearest.find("integrated"), std::string::npos);
  LandingPage page;
  page.gpus = rows;
  const auto html = RenderLandingPage(page);
  EXPECT_NE(html.find("<table id=\"gpus\">"), std::string::npos);
  EXPECT_NE(html.find("data-gpu=\"0000:17:00.0\""), std::string::npos);
  EXPECT_EQ(RenderLandingPage(LandingPage{}).find("id=\"gpus\""), std::string::npos);
}

TEST(LandingPageTest, TheFleetSectionNamesThisAgentItsSourcesAndItsPeers) {
  fleet::FleetStatus status;
  status.self = "10.0.0.1:9841";
  status.peers = 4;
  status.epoch = 12;
  status.pairs = {{"10.0.0.2:9841", "rail0"}, {"10.0.0.3:9841", "rail0"}};
  status.rails = {{"rail0", 2}, {"rail1", 0}};
  fleet::SourceStatus broken;
  broken.name = "file_sd:peers.json";
  broken.targets = 4;
  broken.last_error = "peers.json: [0].targets[1]: \"<b>\" has no port";
  status.sources = {broken};
  LandingPage page;
  page.fleet = BuildLandingFleet(status);
  const std::string html = RenderLandingPage(page);
  EXPECT_NE(html.find("This agent is 10.0.0.1:9841 among 4 targets; epoch 12."), std::string::npos);
  EXPECT_NE(html.find("<td>rail0</td><td>10.0.0.2:9841, 10.0.0.3:9841</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>rail1</td><td>none</td>"), std::string::npos);
  EXPECT_NE(html.find("failing: peers.json"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);  // escaped

  status.self.clear();
  page.fleet = BuildLandingFleet(status);
  EXPECT_NE(RenderLandingPage(page).find("not among the 4 discovered targets"), std::string::npos);
  page.fleet.reset();
  EXPECT_EQ(RenderLandingPage(page).find("<h2>Fleet</h2>"), std::string::npos);
}

}  // namespace
}  // namespace rail::web
