// The figures section: its keys, their defaults and their ranges.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_error.h"
#include "rail/agent/config.h"

namespace rail::agent {
namespace {

using ::testing::HasSubstr;

TEST(ConfigFiguresTest, DefaultsWithoutTheSection) {
  EXPECT_EQ(ParseConfig("", "test.yaml").probing.figures, probe::FigureLimits{});
  EXPECT_DOUBLE_EQ(probe::FigureLimits{}.striping_efficiency_tolerance, 0.1);
  EXPECT_EQ(probe::FigureLimits{}.ratio_max_age, std::chrono::minutes(10));
}

TEST(ConfigFiguresTest, EveryKeyIsRead) {
  const auto figures = ParseConfig(R"(
figures:
  striping_efficiency_tolerance: 0.2
  counter_tolerance: 0
  line_rate_tolerance: 0.01
  ratio_max_age: 30m
  max_interval_cv: 0.5
)",
                                   "test.yaml")
                           .probing.figures;
  EXPECT_DOUBLE_EQ(figures.striping_efficiency_tolerance, 0.2);
  EXPECT_DOUBLE_EQ(figures.counter_tolerance, 0);
  EXPECT_DOUBLE_EQ(figures.line_rate_tolerance, 0.01);
  EXPECT_EQ(figures.ratio_max_age, std::chrono::minutes(30));
  EXPECT_DOUBLE_EQ(figures.max_interval_cv, 0.5);
}

TEST(ConfigFiguresTest, BadValuesNameTheirKey) {
  EXPECT_THAT(ErrorOf("figures: {counter_tolerance: 1.5}\n"),
              HasSubstr("figures.counter_tolerance"));
  EXPECT_THAT(ErrorOf("figures: {line_rate_tolerance: -0.1}\n"),
              HasSubstr("figures.line_rate_tolerance"));
  EXPECT_THAT(ErrorOf("figures: {max_interval_cv: 0}\n"), HasSubstr("figures.max_interval_cv"));
  EXPECT_THAT(ErrorOf("figures: {ratio_max_age: soon}\n"), HasSubstr("figures.ratio_max_age"));
  EXPECT_THAT(ErrorOf("figures: {striping_tolerance: 0.1}\n"), HasSubstr("striping_tolerance"));
  EXPECT_THAT(ErrorOf("figures: 3\n"), HasSubstr("figures"));
  EXPECT_THAT(ErrorOf("health: {multirail_min_efficiency: 2}\n"),
              HasSubstr("health.multirail_min_efficiency"));
}

}  // namespace
}  // namespace rail::agent
