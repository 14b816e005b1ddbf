#include "rail/fleet/duplicates.h"

#include <set>
#include <utility>

namespace rail::fleet {

MergedPlan MergeDuplicates(const std::vector<PlannedPair>& pairs,
                           const std::map<std::string, std::string>& names,
                           const std::string& own_name) {
  const auto name_of = [&names](const std::string& target) -> std::string {
    const auto found = names.find(target);
    return found == names.end() ? std::string() : found->second;
  };
  // The first target (by address) answering with a name on a rail keeps it.
  std::map<std::pair<std::string, std::string>, std::string> keeper;  // (rail, name) -> target
  for (const auto& pair : pairs) {
    const auto name = name_of(pair.peer);
    if (name.empty()) continue;
    auto [entry, inserted] = keeper.try_emplace({pair.rail, name}, pair.peer);
    if (!inserted && pair.peer < entry->second) entry->second = pair.peer;
  }
  MergedPlan merged;
  std::set<std::string> duplicates;
  for (const auto& pair : pairs) {
    const auto name = name_of(pair.peer);
    const bool kept =
        name.empty() || (name != own_name && keeper.at({pair.rail, name}) == pair.peer);
    if (kept) {
      merged.pairs.push_back(pair);
    } else {
      duplicates.insert(pair.peer);
    }
  }
  merged.duplicates.assign(duplicates.begin(), duplicates.end());
  return merged;
}

}  // namespace rail::fleet
