// What `rail_exporter probe` prints of a run: its spread, and why its figures are withheld.
#include "rail/commands/probe_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rail::commands {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

probe::ProbeResult CapacityRun() {
  probe::ProbeResult result;
  result.kind = probe::ProbeKind::kMultirailCapacity;
  result.peer = "b:9841";
  result.rails = {"rail0", "rail1"};
  result.success = true;
  result.bytes = 1000;
  result.seconds = 1;
  result.throughput_bytes_per_second = 1000;
  result.spread = probe::RateSpread{10, 900, 1100, 1000, 0.05};
  return result;
}

TEST(ProbeCommandTest, TheTableShowsTheSpreadAndAWithheldRunIsNotOk) {
  auto run = CapacityRun();
  EXPECT_THAT(FormatProbeTable({run}), HasSubstr("spread: 10 intervals"));
  EXPECT_THAT(FormatProbeTable({run}), HasSubstr(" ok\n"));
  run.withheld = {
      {probe::kRailBytesSum, "the rails' bytes sum to 900, the run says it moved 1000"}};
  const std::string table = FormatProbeTable({run});
  EXPECT_THAT(table, HasSubstr("figures withheld (rail_bytes_sum: the rails' bytes sum to 900"));
  EXPECT_THAT(table, Not(HasSubstr(" ok\n")));
}

TEST(ProbeCommandTest, TheJsonCarriesTheSpreadAndTheWithheldInvariants) {
  auto run = CapacityRun();
  run.withheld = {{probe::kLineRate, "rail0 above its line rate"}};
  const auto json = nlohmann::json::parse(FormatProbeJson({run}));
  ASSERT_EQ(json.size(), 1u);
  EXPECT_DOUBLE_EQ(json[0]["spread"]["cv"].get<double>(), 0.05);
  EXPECT_EQ(json[0]["spread"]["intervals"].get<int>(), 10);
  EXPECT_EQ(json[0]["withheld"][0]["invariant"], "line_rate");
  EXPECT_FALSE(nlohmann::json::parse(FormatProbeJson({CapacityRun()}))[0].contains("withheld"));
}

}  // namespace
}  // namespace rail::commands
