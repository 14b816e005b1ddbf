// A peer as discovery names it. The target ("host:port" of its responder) is the identity every
// agent plans with: all agents read it from the same discovery data, so they agree on it without
// talking, whatever the peer later calls itself in the handshake.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rail::fleet {

struct Target {
  std::string address;                        // "host:port", "[v6]:port"; the plan's identity
  std::map<std::string, std::string> labels;  // file_sd labels (kRailsLabel among them)
  bool operator==(const Target&) const = default;
};

// The label that lists a target's rails, comma-separated ("rail0,rail1"). A target without it is
// on every rail: a fleet of identical hosts needs no label.
inline constexpr std::string_view kRailsLabel = "rails";

// The rails a target lists; nullopt when it has no kRailsLabel (every rail).
std::optional<std::vector<std::string>> TargetRails(const Target& target);
// Whether `target` is on `rail` (listed, or no kRailsLabel).
bool OnRail(const Target& target, std::string_view rail);

// The union of several sources' targets: one entry per address, sorted by address. A target two
// sources name keeps the labels of the first; a label only a later source gives is added.
std::vector<Target> MergeTargets(const std::vector<std::vector<Target>>& lists);

}  // namespace rail::fleet
