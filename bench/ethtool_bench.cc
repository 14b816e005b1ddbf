// The ethtool collector's cost per scrape, apart from the kernel's: the collector alone on the
// spark-dual-rail fixture (one ConnectX-7 rail with a ~1,500-statistic dump), with the dump read
// and parsed every scrape, and with the statistics already in memory (what a host pays beyond the
// ioctls: mapping and exposition). And the ioctls themselves: every statistic of one netdev
// through SIOCETHTOOL, for the netdev named by RAIL_BENCH_NETDEV (a lab veth: run in its
// namespace, `ip netns exec <ns> ethtool_bench`); skipped without it.
#include <benchmark/benchmark.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/collectors/collector_set.h"
#include "rail/health/fabric_sampler.h"
#include "rail/nic/ethtool.h"
#include "rail/sysfs/filesystem.h"

namespace {

const std::string kTree = std::string(RAIL_FIXTURES) + "/spark-dual-rail";

// The dump of the tree, parsed once.
class InMemoryStatistics final : public rail::nic::StatisticsSource {
 public:
  explicit InMemoryStatistics(const rail::nic::StatisticsSource& from) {
    from.Read("enp1s0f0np0", &statistics_);
    driver_ = from.Driver("enp1s0f0np0").value_or("");
  }
  int Read(const std::string& netdev, rail::nic::EthtoolStatistics* out) const override {
    if (netdev != "enp1s0f0np0") return ENOENT;
    *out = statistics_;
    return 0;
  }
  std::optional<std::string> Driver(const std::string&) const override { return driver_; }

 private:
  rail::nic::EthtoolStatistics statistics_;
  std::string driver_;
};

class StepClock final : public rail::base::Clock {
 public:
  rail::base::TimePoint Now() const override { return now_; }
  rail::base::WallTime WallNow() const override { return {}; }
  void Step() { now_ += std::chrono::seconds(10); }

 private:
  rail::base::TimePoint now_{std::chrono::hours(1)};
};

void Scrape(benchmark::State& state, const rail::nic::StatisticsSource& statistics,
            const std::vector<std::string>& collectors = {"ethtool"}) {
  const rail::sysfs::RootedFilesystem sys(kTree + "/sys");
  const rail::sysfs::RootedFilesystem proc(kTree + "/proc");
  rail::collectors::Sources sources;
  sources.inventory.sys = &sys;
  sources.inventory.proc = &proc;
  sources.inventory.nic_statistics = &statistics;
  const rail::collectors::CollectorSet set(sources, collectors);
  std::size_t samples = 0;
  for (auto _ : state) {
    const auto families = set.Collect();
    samples = 0;
    for (const auto& family : families) {
      if (family.name.starts_with("rail_nic_")) samples += family.metric.size();
    }
    benchmark::DoNotOptimize(families);
  }
  state.counters["nic_samples"] = static_cast<double>(samples);
}

void BM_EthtoolCollectorMlx5Dump(benchmark::State& state) {
  const rail::sysfs::RootedFilesystem dumps(kTree + "/ethtool");
  const rail::nic::DumpStatisticsSource statistics(dumps);
  Scrape(state, statistics);
}
BENCHMARK(BM_EthtoolCollectorMlx5Dump)->Unit(benchmark::kMicrosecond);

void BM_EthtoolCollectorMlx5InMemory(benchmark::State& state) {
  const rail::sysfs::RootedFilesystem dumps(kTree + "/ethtool");
  const rail::nic::DumpStatisticsSource from(dumps);
  const InMemoryStatistics statistics(from);
  Scrape(state, statistics);
}
BENCHMARK(BM_EthtoolCollectorMlx5InMemory)->Unit(benchmark::kMicrosecond);

// What any scrape of the tree pays before the collector: the rails (the RDMA devices' files) and
// the scrape's own metadata; the `rails` collector alone, to subtract from the two above.
void BM_RailsCollectorBaseline(benchmark::State& state) {
  const rail::sysfs::RootedFilesystem dumps(kTree + "/ethtool");
  const rail::nic::DumpStatisticsSource statistics(dumps);
  Scrape(state, statistics, {"rails"});
}
BENCHMARK(BM_RailsCollectorBaseline)->Unit(benchmark::kMicrosecond);

// The ethtool collector and the health collector together, the counter history holding two
// samples 10 s apart taken by the fabric sampler (as in the agent), so that every windowed fabric
// rule judges every rail each scrape; with `samples` 0 the history holds the first scrape's
// reading alone and the rules find no rise to judge. The difference between the two is what the
// windowed rules cost a scrape. The scrapes run on the sampler's clock, within half the sample
// interval of the latest reading: they record nothing.
void EthtoolAndHealth(benchmark::State& state, int samples) {
  const rail::sysfs::RootedFilesystem dumps(kTree + "/ethtool");
  const rail::nic::DumpStatisticsSource from(dumps);
  const InMemoryStatistics statistics(from);
  const rail::sysfs::RootedFilesystem sys(kTree + "/sys");
  const rail::sysfs::RootedFilesystem proc(kTree + "/proc");
  rail::collectors::Sources sources;
  sources.inventory.sys = &sys;
  sources.inventory.proc = &proc;
  sources.inventory.nic_statistics = &statistics;
  StepClock clock;
  sources.health.clock = &clock;
  const rail::collectors::CollectorSet set(sources, {"ethtool", "health"});
  rail::health::FabricSampler sampler(set.sources().inventory, sources.health.thresholds,
                                      set.sources().health.counter_history, clock);
  for (int i = 0; i < samples; ++i) {
    sampler.SampleOnce();
    clock.Step();
  }
  std::size_t verdicts = 0;
  for (auto _ : state) {
    const auto families = set.Collect();
    for (const auto& family : families) {
      if (family.name == "rail_check_ok") verdicts = family.metric.size();
    }
    benchmark::DoNotOptimize(families);
  }
  state.counters["verdicts"] = static_cast<double>(verdicts);
}

void BM_EthtoolAndHealthMlx5Sampled(benchmark::State& state) {
  EthtoolAndHealth(state, 2);
}
BENCHMARK(BM_EthtoolAndHealthMlx5Sampled)->Unit(benchmark::kMicrosecond);

void BM_EthtoolAndHealthMlx5NoHistory(benchmark::State& state) {
  EthtoolAndHealth(state, 0);
}
BENCHMARK(BM_EthtoolAndHealthMlx5NoHistory)->Unit(benchmark::kMicrosecond);

void BM_KernelStatisticsRead(benchmark::State& state) {
  const char* netdev = std::getenv("RAIL_BENCH_NETDEV");
  if (netdev == nullptr) {
    state.SkipWithError("set RAIL_BENCH_NETDEV to a netdev of this namespace (a lab veth)");
    return;
  }
  const auto source = rail::nic::MakeKernelStatisticsSource();
  rail::nic::EthtoolStatistics statistics;
  for (auto _ : state) {
    if (const int error = source->Read(netdev, &statistics); error != 0) {
      state.SkipWithError(("SIOCETHTOOL failed: errno " + std::to_string(error)).c_str());
      return;
    }
    benchmark::DoNotOptimize(statistics);
  }
  state.counters["statistics"] = static_cast<double>(statistics.names.size());
}
BENCHMARK(BM_KernelStatisticsRead)->Unit(benchmark::kMicrosecond);

}  // namespace
