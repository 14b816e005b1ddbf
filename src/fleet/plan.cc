#include "rail/fleet/plan.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace rail::fleet {
namespace {

// The rails of one plan, sorted and each once, and which of them a target is on. Targets with the
// same rails label (most of a fleet, typically) share one parse of it (TargetRails).
class RailMembership {
 public:
  explicit RailMembership(const std::vector<std::string>& rails) : rails_(rails) {
    std::sort(rails_.begin(), rails_.end());
    rails_.erase(std::unique(rails_.begin(), rails_.end()), rails_.end());
  }
  const std::vector<std::string>& rails() const { return rails_; }

  // One flag per rails() entry; nullptr: on every rail (no rails label). Valid while this lives.
  const std::vector<bool>* Of(const Target& target) {
    static const std::string kLabel(kRailsLabel);
    const auto label = target.labels.find(kLabel);
    if (label == target.labels.end()) return nullptr;
    auto [entry, inserted] = by_label_.try_emplace(label->second);
    if (inserted) {
      entry->second.reserve(rails_.size());
      for (const auto& rail : rails_) entry->second.push_back(OnRail(target, rail));
    }
    return &entry->second;  // unordered_map keeps its elements in place when it grows
  }

 private:
  std::vector<std::string> rails_;
  std::unordered_map<std::string, std::vector<bool>> by_label_;
};

// A target as the plan sees it: its address and the plan's rails it is on.
struct Member {
  const std::string* address = nullptr;
  const std::vector<bool>* on = nullptr;  // by RailMembership::rails() index; nullptr: every rail
  bool On(std::size_t rail) const { return on == nullptr || (*on)[rail]; }
};

// One entry per address, the first occurrence's labels deciding its rails (as MergeTargets
// would), so that a list with repeats plans like the merged one.
std::vector<Member> UniqueMembers(const std::vector<Target>& targets, RailMembership& membership) {
  std::unordered_set<std::string_view> seen;
  seen.reserve(targets.size());
  std::vector<Member> members;
  members.reserve(targets.size());
  for (const auto& target : targets) {
    if (seen.insert(target.address).second) {
      members.push_back({&target.address, membership.Of(target)});
    }
  }
  return members;
}

// The hash seed of one rail's ring in one epoch. The epoch is hashed as explicit little-endian
// bytes so that every machine derives the same seed whatever its byte order.
std::uint64_t RingSeed(const PlanOptions& options, const std::string& rail) {
  std::array<unsigned char, 8> epoch_bytes{};
  for (std::size_t i = 0; i < epoch_bytes.size(); ++i) {
    epoch_bytes[i] = static_cast<unsigned char>(options.epoch >> (8 * i));
  }
  const XXH64_hash_t epoch_seed =
      XXH3_64bits_withSeed(epoch_bytes.data(), epoch_bytes.size(), options.seed);
  return XXH3_64bits_withSeed(rail.data(), rail.size(), epoch_seed);
}

// A host's place on one rail's ring: ordered by (key, address), the address breaking the rare
// ties of colliding keys the same way on every agent.
struct RingPosition {
  std::uint64_t key = 0;
  const std::string* address = nullptr;
  bool operator<(const RingPosition& other) const {
    return std::tie(key, *address) < std::tie(other.key, *other.address);
  }
};

RingPosition PositionOf(const std::string& address, std::uint64_t ring_seed) {
  return {XXH3_64bits_withSeed(address.data(), address.size(), ring_seed), &address};
}

// How far a position lies after self going round the ring: the positions after self come first
// (by key, then address), then those before it. For distinct keys this is the order of
// (key - self key) mod 2^64; unlike that, it also keeps the ring's order among equal keys.
struct RingDistance {
  bool wrapped = false;  // before self on the ring: reached only past the ring's end
  RingPosition position;
  bool operator<(const RingDistance& other) const {
    if (wrapped != other.wrapped) return !wrapped;
    return position < other.position;
  }
};

// The `count` members of `rail` nearest after `self`, in one pass: a bounded sorted list that a
// candidate enters only when it is nearer than the farthest kept (for hashed keys that happens
// O(count log n) times), so the pass costs O(n).
std::vector<PlannedPair> SuccessorsOn(const std::vector<Member>& members, const std::string& self,
                                      const std::string& rail, std::size_t rail_index,
                                      const PlanOptions& options) {
  const std::uint64_t seed = RingSeed(options, rail);
  const RingPosition self_position = PositionOf(self, seed);
  const std::size_t count = options.peers_per_rail;
  if (count == 0) return {};
  std::vector<RingDistance> nearest;
  nearest.reserve(count + 1);
  for (const auto& member : members) {
    if (!member.On(rail_index) || *member.address == self) continue;
    const RingPosition position = PositionOf(*member.address, seed);
    const RingDistance distance{position < self_position, position};
    if (nearest.size() == count && !(distance < nearest.back())) continue;
    nearest.insert(std::upper_bound(nearest.begin(), nearest.end(), distance), distance);
    if (nearest.size() > count) nearest.pop_back();
  }
  std::vector<PlannedPair> pairs;
  pairs.reserve(nearest.size());
  for (const auto& distance : nearest) pairs.push_back({*distance.position.address, rail});
  return pairs;
}

// The order plans are given in (PlannedPair's own order is by peer first).
bool ByRailThenPeer(const PlannedPair& a, const PlannedPair& b) {
  return std::tie(a.rail, a.peer) < std::tie(b.rail, b.peer);
}

}  // namespace

std::uint64_t EpochAt(base::WallTime now, std::chrono::seconds epoch_length) {
  if (epoch_length.count() <= 0) return 0;
  const auto since_unix_epoch =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch());
  if (since_unix_epoch.count() < 0) return 0;
  return static_cast<std::uint64_t>(since_unix_epoch / epoch_length);
}

std::vector<PlannedPair> PlanForHost(const std::vector<Target>& targets, const std::string& self,
                                     const std::vector<std::string>& self_rails,
                                     const PlanOptions& options) {
  RailMembership membership(self_rails);
  const std::vector<Member> members = UniqueMembers(targets, membership);
  const auto self_member = std::find_if(members.begin(), members.end(),
                                        [&](const Member& m) { return *m.address == self; });
  if (self_member == members.end()) return {};
  std::vector<PlannedPair> plan;
  const auto& rails = membership.rails();
  for (std::size_t rail = 0; rail < rails.size(); ++rail) {
    // A rail self's target does not list: the others leave self off that ring, so self probes
    // nobody over it either.
    if (!self_member->On(rail)) continue;
    auto pairs = SuccessorsOn(members, self, rails[rail], rail, options);
    plan.insert(plan.end(), pairs.begin(), pairs.end());
  }
  std::sort(plan.begin(), plan.end(), ByRailThenPeer);
  return plan;
}

std::map<std::string, std::vector<PlannedPair>> PlanForFleet(const std::vector<Target>& targets,
                                                             const std::vector<std::string>& rails,
                                                             const PlanOptions& options) {
  RailMembership membership(rails);
  const std::vector<Member> members = UniqueMembers(targets, membership);
  std::vector<std::vector<PlannedPair>> plans(members.size());  // by index into members
  std::vector<std::pair<RingPosition, std::size_t>> ring;       // and the member's index
  ring.reserve(members.size());
  for (std::size_t rail_index = 0; rail_index < membership.rails().size(); ++rail_index) {
    const std::string& rail = membership.rails()[rail_index];
    const std::uint64_t seed = RingSeed(options, rail);
    ring.clear();
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (members[i].On(rail_index)) ring.emplace_back(PositionOf(*members[i].address, seed), i);
    }
    std::sort(ring.begin(), ring.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    const std::size_t size = ring.size();
    const std::size_t count =
        std::min<std::size_t>(options.peers_per_rail, size == 0 ? 0 : size - 1);
    for (std::size_t i = 0; i < size; ++i) {
      auto& plan = plans[ring[i].second];
      for (std::size_t step = 1; step <= count; ++step) {
        plan.push_back({*ring[(i + step) % size].first.address, rail});
      }
    }
  }
  std::map<std::string, std::vector<PlannedPair>> by_address;
  for (std::size_t i = 0; i < members.size(); ++i) {
    std::sort(plans[i].begin(), plans[i].end(), ByRailThenPeer);
    by_address.emplace_hint(by_address.end(), *members[i].address, std::move(plans[i]));
  }
  return by_address;
}

}  // namespace rail::fleet
