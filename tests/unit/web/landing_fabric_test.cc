// The landing page's fabric column: each fabric check's state per rail (ok, failing, no verdict
// with the counters read, not read), without the failing checks' reasons.
#include <gtest/gtest.h>

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
                                                       {"storms", "no verdict"},
                                                       {"ECN/CNP", "no verdict"},
                                                       {"drops", "failing"},
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
