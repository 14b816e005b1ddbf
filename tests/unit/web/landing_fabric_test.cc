// The landing page's fabric column: each fabric check's state per rail (ok, failing, no verdict
// with the counters read, not read), without the failing checks' reasons.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "rail/web/landing_page.h"

namespace rail::web {
namespace {

std::map<std::string, std::string> States(const std::vector<LandingFabricCheck>& fabric) {
  std::map<std::string, std::string> states;
  for (const auto& one : fabric) states[one.label] = one.state;
  return states;
}

inventory::RailFabric Mlx5Reading(const std::string& rail) {
  inventory::RailFabric fabric{rail, {}};
  fabric.reading.netdev = "eth0";
  fabric.reading.driver = "mlx5_core";
  fabric.reading.known_driver = true;
  return fabric;
}

TEST(LandingFabricTest, VerdictsAndNoVerdictsOfEachFabricCheck) {
  const std::vector<health::CheckResult> checks = {
      {"pfc_pause", "rail0", "", true, ""},
      {"roce_drops", "rail0", "", false, "RoCE packets lost: out_of_sequence rose by 5"},
      {"link_flaps", "rail1", "", false, "link went down"},  // another rail's
      {"mtu", "rail0", "", false, "not a fabric check"},
  };
  const std::vector<inventory::RailFabric> fabric = {Mlx5Reading("rail0")};
  inventory::RailTemperature sensor{"rail0", "hwmon2", {}};
  const auto rail0 = States(BuildLandingFabric("rail0", checks, fabric, {sensor}));
  EXPECT_EQ(rail0, (std::map<std::string, std::string>{{"pause", "ok"},
                                                       {"802.3x", "no verdict"},
                                                       {"storms", "no verdict"},
                                                       {"ECN/CNP", "no verdict"},
                                                       {"drops", "failing"},
                                                       {"discards", "no verdict"},
                                                       {"host rx", "no verdict"},
                                                       {"retx", "no verdict"},
                                                       {"flaps", "no verdict"},
                                                       {"FEC", "no verdict"},
                                                       {"temp", "no verdict"}}));
  // rail1's NIC was not read (no allow-listed driver, or the ethtool collector is off): its
  // missing verdicts are "not read", not "no verdict" and never "ok".
  auto veth = Mlx5Reading("rail1");
  veth.reading.driver = "veth";
  veth.reading.known_driver = false;
  const auto rail1 = States(BuildLandingFabric("rail1", checks, {veth}, {}));
  EXPECT_EQ(rail1.at("flaps"), "failing");
  EXPECT_EQ(rail1.at("pause"), "not read");
  EXPECT_EQ(rail1.at("temp"), "not read");
}

TEST(LandingFabricTest, TheNewFabricChecksInTheirOrder) {
  const std::vector<health::CheckResult> checks = {
      {"global_pause", "rail0", "", false, "802.3x pause on"},
      {"port_discards", "rail0", "", true, ""},
      {"host_receive_starvation", "rail0", "", false, "host fault: rx_out_of_buffer rose"},
      {"roce_retransmissions", "rail0", "", true, ""},
  };
  std::vector<std::string> labels;
  std::map<std::string, std::string> states;
  for (const auto& one : BuildLandingFabric("rail0", checks, {Mlx5Reading("rail0")}, {})) {
    labels.push_back(one.label);
    states[one.check] = one.state;
  }
  EXPECT_EQ(labels,
            (std::vector<std::string>{"pause", "802.3x", "storms", "ECN/CNP", "drops", "discards",
                                      "host rx", "retx", "flaps", "FEC", "temp"}));
  EXPECT_EQ(states.at("global_pause"), "failing");
  EXPECT_EQ(states.at("port_discards"), "ok");
  EXPECT_EQ(states.at("host_receive_starvation"), "failing");
  EXPECT_EQ(states.at("roce_retransmissions"), "ok");
}

// A NIC that lists no statistics (EOPNOTSUPP, an empty dump) gives its checks no evidence: "not
// read", as if it had not been read, never "no verdict" and never "ok". The RDMA port's hw_counters
// are read apart from it: a verdict of one check judged on them makes the other's absence "no
// verdict".
TEST(LandingFabricTest, ANicWithoutStatisticsIsNotReadButItsRdmaPortIs) {
  auto empty = Mlx5Reading("rail0");
  empty.reading.no_statistics = true;
  const std::vector<health::CheckResult> checks = {
      {"roce_retransmissions", "rail0", "", false, "rnr_nak_retry_err rose by 4 (RNR)"},
  };
  const auto rail0 = States(BuildLandingFabric("rail0", checks, {empty}, {}));
  EXPECT_EQ(rail0.at("pause"), "not read");
  EXPECT_EQ(rail0.at("discards"), "not read");
  EXPECT_EQ(rail0.at("host rx"), "not read");
  EXPECT_EQ(rail0.at("802.3x"), "not read");
  EXPECT_EQ(rail0.at("retx"), "failing");
  EXPECT_EQ(rail0.at("ECN/CNP"), "no verdict");
  // Neither the NIC nor the port read: all "not read".
  const auto none = States(BuildLandingFabric("rail0", {}, {empty}, {}));
  EXPECT_EQ(none.at("retx"), "not read");
  EXPECT_EQ(none.at("ECN/CNP"), "not read");
}

TEST(LandingFabricTest, RendersStatesNotReasons) {
  LandingPage page;
  LandingRailRow row;
  row.rail = "rail0";
  row.failing = {{"roce_drops", "rail0", "", false, "RoCE packets lost: out_of_sequence"}};
  row.fabric = BuildLandingFabric("rail0", row.failing, {Mlx5Reading("rail0")}, {});
  page.rails = {row};
  row.rail = "rail1";
  row.failing.clear();
  row.fabric = BuildLandingFabric("rail1", {}, {}, {});
  page.rails.push_back(row);
  const std::string html = RenderLandingPage(page);
  EXPECT_NE(html.find("<th>fabric</th><th>failing checks</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"fabric bad\">"), std::string::npos);
  EXPECT_NE(html.find("<span data-check=\"roce_drops\" class=\"bad\">drops: failing</span>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<span data-check=\"pfc_pause\" class=\"unknown\">pause: no verdict</span>"),
            std::string::npos);
  // The reason is the failing checks column's, once.
  const auto first = html.find("RoCE packets lost");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(html.find("RoCE packets lost", first + 1), std::string::npos);
  // All alike: one word, and not green.
  EXPECT_NE(html.find("<td class=\"fabric unknown\">not read</td>"), std::string::npos) << html;
}

}  // namespace
}  // namespace rail::web
