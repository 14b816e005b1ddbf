// One agent under two targets (listed by address in one source and by name in another, or by two
// addresses): the plan cannot know, as it uses the targets only, so that agents agree without
// talking. The handshake can: each responder names itself in its welcome. A prober that sees two
// planned targets on a rail answer with one name probes only the first of them (by address), and
// a target answering with this agent's own name is not probed at all.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rail/fleet/plan.h"

namespace rail::fleet {

struct MergedPlan {
  std::vector<PlannedPair> pairs;       // the plan without the duplicates' pairs
  std::vector<std::string> duplicates;  // targets left out, sorted
};

// `names`: the name each target's responder gave (targets not probed yet are absent).
MergedPlan MergeDuplicates(const std::vector<PlannedPair>& pairs,
                           const std::map<std::string, std::string>& names,
                           const std::string& own_name);

}  // namespace rail::fleet
