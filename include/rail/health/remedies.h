// What a person runs to fix a failing check: one remedy per check token, in one place, so that
// `rail_exporter doctor`, the landing page and the runbook (docs/runbook.md) say the same thing.
#pragma once

#include <string>
#include <vector>

#include "rail/health/checks.h"
#include "rail/inventory/pcie_topology.h"
#include "rail/inventory/rails.h"

namespace rail::health {

// The command (or commands, joined with "; ") that fixes `verdict`, with the rail's netdev,
// device, port and (from `topology`, when given) PCI address filled in when `rails` names the
// verdict's rail; placeholders in angle brackets (<netdev>) otherwise. "" for an unknown token.
std::string Remedy(const CheckResult& verdict, const std::vector<inventory::Rail>& rails,
                   const inventory::PcieTopology* topology = nullptr);

// What a passing check confirms, for people ("the port is ACTIVE with its link up"); "" for an
// unknown token.
std::string CheckSummary(const std::string& check);

// The check tokens that have a remedy, in the order of checks.h.
const std::vector<std::string>& CheckTokens();

}  // namespace rail::health
