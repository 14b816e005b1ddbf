// health.cabling: the layout rail_cabling judges by, its keys and what it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_error.h"
#include "rail/agent/config.h"

namespace rail::agent {
namespace {

using ::testing::HasSubstr;

TEST(ConfigCablingTest, NoneByDefault) {
  EXPECT_EQ(ParseConfig("", "test.yaml").health.cabling, health::Cabling{});
}

TEST(ConfigCablingTest, LayoutAndSwitchPatterns) {
  const auto cabling = ParseConfig(
                           "health:\n  cabling:\n    layout: rail-optimized\n"
                           "    switches: {rail0: 'leaf-rail0*', rail1: leaf-rail1}\n",
                           "test.yaml")
                           .health.cabling;
  EXPECT_TRUE(cabling.rail_optimized);
  EXPECT_EQ(cabling.switches, (std::map<std::string, std::string>{{"rail0", "leaf-rail0*"},
                                                                  {"rail1", "leaf-rail1"}}));
  EXPECT_FALSE(ParseConfig("health:\n  cabling: {layout: any}\n", "test.yaml")
                   .health.cabling.rail_optimized);
}

TEST(ConfigCablingTest, ChangeWindow) {
  EXPECT_EQ(health::Cabling{}.change_window, base::Duration(std::chrono::minutes(15)));
  EXPECT_EQ(ParseConfig("health:\n  cabling: {change_window: 2h}\n", "test.yaml")
                .health.cabling.change_window,
            base::Duration(std::chrono::hours(2)));
  EXPECT_THAT(ErrorOf("health:\n  cabling: {change_window: soon}\n"),
              HasSubstr("health.cabling.change_window"));
}

TEST(ConfigCablingTest, RefusesWhatItCannotJudgeBy) {
  EXPECT_THAT(ErrorOf("health:\n  cabling: {layout: spine}\n"),
              HasSubstr("health.cabling.layout: expected rail-optimized or any, not 'spine'"));
  EXPECT_THAT(ErrorOf("health:\n  cabling: {switches: [leaf]}\n"),
              HasSubstr("health.cabling.switches: expected rail: pattern pairs"));
  EXPECT_THAT(ErrorOf("health:\n  cabling: {leaves: 2}\n"), HasSubstr("health.cabling.leaves"));
  EXPECT_THAT(ErrorOf("health:\n  cabling: rail-optimized\n"),
              HasSubstr("health.cabling: expected a mapping"));
}

}  // namespace
}  // namespace rail::agent
