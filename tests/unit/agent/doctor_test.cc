// The doctor's report: one finding per verdict or fact, evidence and fix beneath it, a last line
// that counts failures; the JSON carries the same fields; bad options exit 2.
#include "rail/agent/doctor.h"

#include <gmock/gmock.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace rail::agent {
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

}  // namespace
}  // namespace rail::agent
