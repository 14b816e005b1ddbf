// The plan on a simulated fleet of 10,000 hosts with 8 rails each: what every agent computes on
// its own agrees with the global plan, every host is measured on every rail, and churn and epochs
// move as few and as many pairs as the ring promises (rail/fleet/plan.h). The figures are printed
// and recorded as test properties, for the documentation to quote.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "rail/fleet/plan.h"
#include "simulated_fleet.h"

namespace rail::fleet {
namespace {

using namespace simulated;

constexpr int kKinds = 2;  // ucx_rtt and ucx_throughput, the plan command's default

using FleetPlan = std::map<std::string, std::vector<PlannedPair>>;
// (prober, peer, rail)
using Pair = std::tuple<std::string, std::string, std::string>;

PlanOptions Options(std::uint64_t epoch = kEpoch) {
  return {.peers_per_rail = kPeersPerRail, .seed = kSeed, .epoch = epoch};
}

std::set<Pair> Pairs(const FleetPlan& plan) {
  std::set<Pair> pairs;
  for (const auto& [prober, planned] : plan) {
    for (const auto& pair : planned) pairs.emplace(prober, pair.peer, pair.rail);
  }
  return pairs;
}

// Pairs in one plan and not the other, either way.
std::size_t ChangedPairs(const std::set<Pair>& before, const std::set<Pair>& after) {
  std::vector<Pair> changed;
  std::set_symmetric_difference(before.begin(), before.end(), after.begin(), after.end(),
                                std::back_inserter(changed));
  return changed.size();
}

class FleetSimulationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    targets_ = new std::vector<Target>(Fleet(kHosts));
    plan_ = new FleetPlan(PlanForFleet(*targets_, Rails(), Options()));
  }
  static void TearDownTestSuite() {
    delete plan_;
    delete targets_;
  }
  static std::vector<Target>* targets_;
  static FleetPlan* plan_;  // the global plan, computed once
};

std::vector<Target>* FleetSimulationTest::targets_ = nullptr;
FleetPlan* FleetSimulationTest::plan_ = nullptr;

TEST_F(FleetSimulationTest, SampledAgentsComputeTheirOwnPlanAlike) {
  std::mt19937 random(13);
  std::uniform_int_distribution<int> host(0, kHosts - 1);
  constexpr int kSample = 200;
  for (int i = 0; i < kSample; ++i) {
    const std::string self = Address(host(random));
    ASSERT_EQ(PlanForHost(*targets_, self, Rails(), Options()), plan_->at(self)) << self;
  }
  Report("sampled_agents_agreeing", kSample);
}

TEST_F(FleetSimulationTest, EveryHostProbesKAndIsProbedOnEveryRail) {
  std::map<std::pair<std::string, std::string>, unsigned> in_degree;  // (host, rail)
  unsigned min_out = ~0u, max_out = 0;
  for (const auto& [host, plan] : *plan_) {
    std::map<std::string, unsigned> out_degree;
    for (const auto& pair : plan) {
      ASSERT_NE(pair.peer, host);
      ++out_degree[pair.rail];
      ++in_degree[{pair.peer, pair.rail}];
    }
    ASSERT_EQ(out_degree.size(), static_cast<std::size_t>(kRails)) << host;
    for (const auto& [rail, degree] : out_degree) {
      EXPECT_EQ(degree, kPeersPerRail) << host << " " << rail;
      min_out = std::min(min_out, degree);
      max_out = std::max(max_out, degree);
    }
  }
  // Coverage: every host is measured by someone on every rail.
  EXPECT_EQ(in_degree.size(), static_cast<std::size_t>(kHosts) * kRails);
  unsigned min_in = ~0u, max_in = 0;
  for (const auto& [host_rail, degree] : in_degree) {
    min_in = std::min(min_in, degree);
    max_in = std::max(max_in, degree);
  }
  EXPECT_GE(min_in, 1u);
  EXPECT_LE(max_in, 2 * kPeersPerRail);
  Report("hosts", kHosts);
  Report("rails", kRails);
  Report("host_rails_probed", static_cast<double>(in_degree.size()));
  Report("out_degree_min", min_out);
  Report("out_degree_max", max_out);
  Report("in_degree_min", min_in);
  Report("in_degree_max", max_in);
}

TEST_F(FleetSimulationTest, OnePercentLeavingChangesFewPairs) {
  auto remaining = *targets_;
  std::mt19937 random(1);
  std::shuffle(remaining.begin(), remaining.end(), random);
  const std::size_t leavers = kHosts / 100;
  remaining.resize(remaining.size() - leavers);
  const auto before = Pairs(*plan_);
  const auto after = Pairs(PlanForFleet(remaining, Rails(), Options()));
  const double changed =
      static_cast<double>(ChangedPairs(before, after)) / static_cast<double>(before.size());
  // Each leaver takes its k pairs out and its k probers' pairs to it, and gives those k probers
  // a new peer each: 3k of the N*k pairs of a rail. Adjacent leavers share some.
  const double expected = 3.0 * kPeersPerRail * leavers / (kHosts * kPeersPerRail);
  EXPECT_GT(changed, 0.0);
  EXPECT_LT(changed, 2 * expected);
  Report("leave_1pct_changed_fraction", changed);
  Report("leave_1pct_bound_3k_leavers_over_nk", expected);
}

TEST_F(FleetSimulationTest, OneHostJoiningChangesAboutThreeKPairsPerRail) {
  auto joined = *targets_;
  joined.push_back({Address(kHosts), {}});
  const auto before = Pairs(*plan_);
  const auto after = Pairs(PlanForFleet(joined, Rails(), Options()));
  const std::size_t changed = ChangedPairs(before, after);
  EXPECT_GT(changed, 0u);
  EXPECT_LE(changed, 3u * kPeersPerRail * kRails);
  Report("join_1_changed_pairs", static_cast<double>(changed));
  Report("join_1_changed_fraction",
         static_cast<double>(changed) / static_cast<double>(before.size()));
}

TEST_F(FleetSimulationTest, EpochsMeasureNewPairsOverADay) {
  constexpr int kEpochs = 24;
  constexpr int kEvery = 10;  // the pairs of every 10th host are followed (1,000 hosts)
  // Pairs as numbers (peer index * rails + rail index), to keep 24 epochs fast.
  std::unordered_map<std::string, std::uint32_t> index;
  for (const auto& target : *targets_) {
    index.emplace(target.address, static_cast<std::uint32_t>(index.size()));
  }
  std::unordered_map<std::string, std::uint32_t> rail_index;
  for (const auto& rail : Rails()) {
    rail_index.emplace(rail, static_cast<std::uint32_t>(rail_index.size()));
  }
  std::vector<std::unordered_set<std::uint32_t>> measured(kHosts / kEvery);
  std::vector<double> mean_distinct;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    FleetPlan redrawn;
    if (epoch > 0) redrawn = PlanForFleet(*targets_, Rails(), Options(kEpoch + epoch));
    const FleetPlan& plan = epoch == 0 ? *plan_ : redrawn;
    std::size_t total = 0;
    for (std::size_t sampled = 0; sampled < measured.size(); ++sampled) {
      auto& pairs = measured[sampled];
      for (const auto& pair : plan.at(Address(static_cast<int>(sampled) * kEvery))) {
        pairs.insert(index.at(pair.peer) * kRails + rail_index.at(pair.rail));
      }
      total += pairs.size();
    }
    mean_distinct.push_back(static_cast<double>(total) / static_cast<double>(measured.size()));
    if (epoch > 0) {
      EXPECT_GT(mean_distinct[epoch], mean_distinct[epoch - 1]) << epoch;
    }
  }
  // With 10,000 hosts a re-drawn ring rarely repeats a pair: close to k * rails new ones each time.
  const double per_epoch = kPeersPerRail * kRails;
  EXPECT_GT(mean_distinct.back(), 0.9 * kEpochs * per_epoch);
  Report("distinct_pairs_per_host_after_1_epoch", mean_distinct.front());
  Report("distinct_pairs_per_host_after_4_epochs", mean_distinct[3]);
  Report("distinct_pairs_per_host_after_24_epochs", mean_distinct.back());
}

TEST_F(FleetSimulationTest, SeriesPerHostAreKTimesRailsTimesKinds) {
  std::size_t max_pairs = 0;
  for (const auto& [host, plan] : *plan_) max_pairs = std::max(max_pairs, plan.size());
  const std::size_t series = max_pairs * kKinds;
  EXPECT_EQ(series, static_cast<std::size_t>(kPeersPerRail) * kRails * kKinds);
  Report("probe_series_per_host", static_cast<double>(series));
}

}  // namespace
}  // namespace rail::fleet
