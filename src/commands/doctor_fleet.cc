#include "commands/doctor_fleet.h"

#include <string>

#include "rail/base/clock.h"
#include "rail/fleet/discovery.h"
#include "rail/peer/connection.h"
#include "rail/probing/fleet_planner.h"

namespace rail::commands {
namespace {

constexpr const char* kFleetDocs = "docs/fleet.md";

// The port peers reach this agent's responder on, which its own target carries.
std::uint16_t ResponderPort(const agent::AgentConfig& config) {
  const std::string& listen = config.probing.responder.listen_address;
  std::string error;
  const auto address =
      peer::ParseHostPort(listen.empty() || listen.front() == ':' ? "0.0.0.0" + listen : listen,
                          peer::kDefaultResponderPort, &error);
  return address ? address->port : peer::kDefaultResponderPort;
}

Finding Make(FindingStatus status, std::string check, std::string summary, std::string evidence,
             std::string fix = "") {
  Finding finding;
  finding.status = status;
  finding.check = std::move(check);
  finding.summary = std::move(summary);
  finding.evidence = std::move(evidence);
  finding.fix = std::move(fix);
  return finding;
}

}  // namespace

Finding SelfFinding(const probing::FleetConfig& fleet, const std::vector<fleet::Target>& targets,
                    const fleet::SelfIdentity& identity) {
  const std::string evidence = "the targets of fleet.discovery (" + std::to_string(targets.size()) +
                               "), this host's addresses";
  if (targets.empty()) {
    return Make(FindingStatus::kInfo, "fleet_self",
                "discovery gave no target to look for this "
                "agent among",
                evidence);
  }
  std::string error;
  const auto self = fleet::ResolveSelf(targets, fleet.self, identity, &error);
  if (self) {
    return Make(FindingStatus::kPass, "fleet_self",
                "this agent is " + *self + " among " + std::to_string(targets.size()) + " targets",
                evidence);
  }
  return Make(FindingStatus::kFail, "fleet_self",
              "this agent is not among the " + std::to_string(targets.size()) +
                  " discovered targets: " + error,
              evidence,
              fleet.self
                  ? "set fleet.self to this agent's target as discovery lists it, or list "
                    "it in discovery (" +
                        std::string(kFleetDocs) + ")"
                  : "set fleet.self to this agent's target (" + std::string(kFleetDocs) + ")");
}

std::vector<Finding> FleetFindings(const agent::AgentConfig& config) {
  if (!config.probing.fleet) return {};
  fleet::Discovery discovery(probing::MakeDiscoverySources(*config.probing.fleet),
                             base::SystemClock());
  discovery.Refresh();
  std::vector<Finding> findings;
  for (const auto& source : discovery.Status()) {
    if (source.healthy) {
      findings.push_back(Make(FindingStatus::kPass, "fleet_discovery",
                              source.name + ": " + std::to_string(source.targets) + " targets",
                              source.name));
    } else {
      findings.push_back(Make(FindingStatus::kFail, "fleet_discovery",
                              source.name + ": " + source.last_error, source.name,
                              "see the source's limits and failure modes in " +
                                  std::string(kFleetDocs) + "#discovery"));
    }
  }
  findings.push_back(SelfFinding(*config.probing.fleet, discovery.Targets(),
                                 fleet::LocalIdentity(ResponderPort(config))));
  return findings;
}

}  // namespace rail::commands
