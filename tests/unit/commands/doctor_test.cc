// The doctor's report: one finding per verdict or fact, evidence and fix beneath it, a last line
// that counts failures; the JSON carries the same fields; bad options exit 2.
#include "rail/commands/doctor.h"

#include <gmock/gmock.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "commands/doctor_fleet.h"

namespace rail::commands {
namespace {

std::vector<Finding> TwoFindings() {
  Finding pass{FindingStatus::kPass,    "mtu", "rail0", "", "the MTUs agree",
               "sysfs class/net/a/mtu", ""};
  Finding fail{
      FindingStatus::kFail,       "pcie_link", "rail1", "", "mlx5_1 at x8", "sysfs bus/pci",
      "lspci -vv -s 0000:06:00.0"};
  return {pass, fail};
}

TEST(DoctorTest, TextReadsTopToBottomWithEvidenceAndFix) {
  EXPECT_EQ(FormatDoctorText(TwoFindings()),
            "PASS mtu rail=rail0: the MTUs agree\n"
            "     evidence: sysfs class/net/a/mtu\n"
            "FAIL pcie_link rail=rail1: mlx5_1 at x8\n"
            "     evidence: sysfs bus/pci\n"
            "     fix: lspci -vv -s 0000:06:00.0\n"
            "1 check(s) failed\n");
  EXPECT_THAT(FormatDoctorText({TwoFindings()[0]}), ::testing::EndsWith("every check passed\n"));
}

TEST(DoctorTest, JsonHasTheSameFindings) {
  const auto json = nlohmann::json::parse(FormatDoctorJson(TwoFindings()));
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["status"], "PASS");
  EXPECT_FALSE(json[0].contains("fix"));
  EXPECT_EQ(json[1]["status"], "FAIL");
  EXPECT_EQ(json[1]["check"], "pcie_link");
  EXPECT_EQ(json[1]["rail"], "rail1");
  EXPECT_EQ(json[1]["fix"], "lspci -vv -s 0000:06:00.0");
}

TEST(DoctorTest, CouldNotRunExitsTwoWithOneLine) {
  DoctorOptions options;
  options.output = "yaml";
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(RunDoctor(options, out, err), 2);
  EXPECT_EQ(err.str(), "rail_exporter doctor: --output: expected text or json\n");
  options.output = "text";
  options.sysfs_root = "/nonexistent/rail_exporter/sys";
  err.str("");
  EXPECT_EQ(RunDoctor(options, out, err), 2);
  EXPECT_EQ(err.str(),
            "rail_exporter doctor: --path.sysfs: cannot read /nonexistent/rail_exporter/sys\n");
  EXPECT_EQ(out.str(), "");
}

// fleet.self that discovery does not list: a FAIL naming it and the target this host's addresses
// match, so that the fix is plain.
TEST(DoctorFleetTest, AConfiguredSelfNotAmongTheTargetsFails) {
  probing::FleetConfig fleet;
  fleet.self = "10.9.9.9:9841";
  const std::vector<fleet::Target> targets = {{"10.0.0.1:9841", {}}, {"10.0.0.2:9841", {}}};
  const fleet::SelfIdentity identity{{"10.0.0.2"}, {"node2"}, 9841};
  const Finding finding = SelfFinding(fleet, targets, identity);
  EXPECT_EQ(finding.status, FindingStatus::kFail);
  EXPECT_EQ(finding.check, "fleet_self");
  EXPECT_THAT(finding.summary,
              ::testing::HasSubstr("not among the 2 discovered targets: fleet.self "
                                   "10.9.9.9:9841 is not one of them; by its "
                                   "addresses this host is 10.0.0.2:9841"));
  EXPECT_THAT(finding.fix, ::testing::HasSubstr("fleet.self"));

  fleet.self = "10.0.0.1:9841";
  EXPECT_EQ(SelfFinding(fleet, targets, identity).status, FindingStatus::kPass);
  fleet.self.reset();  // found by its addresses
  EXPECT_EQ(SelfFinding(fleet, targets, identity).summary,
            "this agent is 10.0.0.2:9841 among 2 targets");
  EXPECT_EQ(SelfFinding(fleet, {}, identity).status, FindingStatus::kInfo);
}

}  // namespace
}  // namespace rail::commands
