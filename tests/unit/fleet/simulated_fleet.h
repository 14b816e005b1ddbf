// The simulated fleet of the plan's fleet-wide tests: 10,000 hosts with 8 rails each, at the
// plan's default k, seed and a fixed epoch; and how those tests print the figures the docs quote.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "rail/fleet/plan.h"

namespace rail::fleet::simulated {

inline constexpr int kHosts = 10'000;
inline constexpr int kRails = 8;
inline constexpr unsigned kPeersPerRail = kDefaultPeersPerRail;
inline constexpr std::uint64_t kSeed = 2026;
inline constexpr std::uint64_t kEpoch = 493'000;  // an epoch of 6 h in 2026

// Host n's agent address: 10.a.b.c:9841, 250 hosts to a /24.
inline std::string Address(int host) {
  return "10." + std::to_string(host / 62500) + "." + std::to_string(host / 250 % 250) + "." +
         std::to_string(host % 250 + 1) + ":9841";
}

inline std::vector<Target> Fleet(int hosts) {
  std::vector<Target> targets;
  targets.reserve(static_cast<std::size_t>(hosts));
  for (int host = 0; host < hosts; ++host) targets.push_back({Address(host), {}});
  return targets;
}

inline std::vector<std::string> Rails() {
  std::vector<std::string> rails;
  for (int rail = 0; rail < kRails; ++rail) rails.push_back("rail" + std::to_string(rail));
  return rails;
}

// Printed for the log and recorded as a test property for the documentation to quote.
inline void Report(const std::string& name, double value) {
  std::cout << "[ figure   ] " << name << " = " << value << "\n";
  ::testing::Test::RecordProperty(name, std::to_string(value));
}

}  // namespace rail::fleet::simulated
