// The doctor's report as text (top to bottom, evidence and fix beneath each finding) and JSON.
#include <spdlog/fmt/fmt.h>

#include <nlohmann/json.hpp>

#include "rail/commands/doctor.h"

namespace rail::commands {

const char* FindingStatusName(FindingStatus status) {
  switch (status) {
    case FindingStatus::kPass:
      return "PASS";
    case FindingStatus::kFail:
      return "FAIL";
    case FindingStatus::kInfo:
      return "INFO";
  }
  return "INFO";
}

namespace {

std::string Subject(const Finding& finding) {
  std::string subject;
  if (!finding.rail.empty()) subject += " rail=" + finding.rail;
  if (!finding.peer.empty()) subject += " peer=" + finding.peer;
  return subject;
}

}  // namespace

std::string FormatDoctorText(const std::vector<Finding>& findings) {
  std::size_t failed = 0;
  std::string text;
  for (const auto& finding : findings) {
    failed += finding.status == FindingStatus::kFail ? 1 : 0;
    text += fmt::format("{} {}{}: {}\n", FindingStatusName(finding.status), finding.check,
                        Subject(finding), finding.summary);
    text += fmt::format("     evidence: {}\n", finding.evidence);
    if (!finding.fix.empty()) text += fmt::format("     fix: {}\n", finding.fix);
  }
  text += failed == 0 ? "every check passed\n" : fmt::format("{} check(s) failed\n", failed);
  return text;
}

std::string FormatDoctorJson(const std::vector<Finding>& findings) {
  nlohmann::json json = nlohmann::json::array();
  for (const auto& finding : findings) {
    nlohmann::json entry = {{"status", FindingStatusName(finding.status)},
                            {"check", finding.check},
                            {"rail", finding.rail},
                            {"peer", finding.peer},
                            {"summary", finding.summary},
                            {"evidence", finding.evidence}};
    if (!finding.fix.empty()) entry["fix"] = finding.fix;
    json.push_back(std::move(entry));
  }
  return json.dump(2) + "\n";
}

}  // namespace rail::commands
