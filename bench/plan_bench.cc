// The fleet plan's cost: what one agent pays to compute its own peers (fleet::PlanForHost, every
// plan recomputation after a discovery change or a new epoch), and the whole fleet's plan at once
// (fleet::PlanForFleet, simulations and checks), at 1,000 to 50,000 hosts with 8 rails each.
// `labels:1` gives every target a rails label ("rail0,...,rail7"), which the plan parses; without
// it every target is on every rail. Each benchmark repeats 10 times and reports the median.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "rail/fleet/plan.h"
#include "rail/fleet/target.h"

namespace {

using rail::fleet::PlanOptions;
using rail::fleet::Target;

constexpr int kRails = 8;
constexpr int kRepetitions = 10;

std::vector<std::string> Rails() {
  std::vector<std::string> rails;
  for (int rail = 0; rail < kRails; ++rail) rails.push_back("rail" + std::to_string(rail));
  return rails;
}

std::vector<Target> Fleet(std::int64_t hosts, bool labels) {
  std::string rails_label;
  for (const auto& rail : Rails()) rails_label += (rails_label.empty() ? "" : ",") + rail;
  std::vector<Target> targets;
  targets.reserve(static_cast<std::size_t>(hosts));
  for (std::int64_t host = 0; host < hosts; ++host) {
    Target target{"10." + std::to_string(host / 62500) + "." + std::to_string(host / 250 % 250) +
                      "." + std::to_string(host % 250 + 1) + ":9841",
                  {}};
    if (labels) target.labels[std::string(rail::fleet::kRailsLabel)] = rails_label;
    targets.push_back(std::move(target));
  }
  return targets;
}

const PlanOptions kOptions{
    .peers_per_rail = rail::fleet::kDefaultPeersPerRail, .seed = 0, .epoch = 493'000};

void BM_PlanForHost(benchmark::State& state) {
  const auto targets = Fleet(state.range(0), state.range(1) != 0);
  const auto rails = Rails();
  const std::string self = targets[targets.size() / 2].address;
  std::size_t pairs = 0;
  for (auto _ : state) {
    auto plan = rail::fleet::PlanForHost(targets, self, rails, kOptions);
    pairs = plan.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["pairs"] = static_cast<double>(pairs);
}
BENCHMARK(BM_PlanForHost)
    ->ArgNames({"hosts", "labels"})
    ->ArgsProduct({{1'000, 10'000, 50'000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(kRepetitions)
    ->ReportAggregatesOnly(true);

void BM_PlanForFleet(benchmark::State& state) {
  const auto targets = Fleet(state.range(0), false);
  const auto rails = Rails();
  for (auto _ : state) {
    auto plans = rail::fleet::PlanForFleet(targets, rails, kOptions);
    benchmark::DoNotOptimize(plans);
  }
}
BENCHMARK(BM_PlanForFleet)
    ->ArgName("hosts")
    ->Arg(1'000)
    ->Arg(10'000)
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(kRepetitions)
    ->ReportAggregatesOnly(true);

}  // namespace
