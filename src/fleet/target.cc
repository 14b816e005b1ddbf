#include "rail/fleet/target.h"

#include <algorithm>
#include <sstream>

namespace rail::fleet {

std::optional<std::vector<std::string>> TargetRails(const Target& target) {
  const auto found = target.labels.find(std::string(kRailsLabel));
  if (found == target.labels.end()) return std::nullopt;
  std::vector<std::string> rails;
  std::stringstream list(found->second);
  for (std::string rail; std::getline(list, rail, ',');) {
    const auto first = rail.find_first_not_of(" \t");
    const auto last = rail.find_last_not_of(" \t");
    if (first != std::string::npos) rails.push_back(rail.substr(first, last - first + 1));
  }
  return rails;
}

bool OnRail(const Target& target, std::string_view rail) {
  const auto rails = TargetRails(target);
  return !rails || std::find(rails->begin(), rails->end(), rail) != rails->end();
}

std::vector<Target> MergeTargets(const std::vector<std::vector<Target>>& lists) {
  std::map<std::string, Target> merged;
  for (const auto& list : lists) {
    for (const auto& target : list) {
      auto [entry, inserted] = merged.try_emplace(target.address, target);
      if (inserted) continue;
      // Labels the first source gave win; map::insert keeps existing keys.
      entry->second.labels.insert(target.labels.begin(), target.labels.end());
    }
  }
  std::vector<Target> targets;
  targets.reserve(merged.size());
  for (auto& [address, target] : merged) targets.push_back(std::move(target));
  return targets;
}

}  // namespace rail::fleet
