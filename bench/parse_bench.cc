// Micro-benchmarks of the sysfs library: the value parsers on the strings the kernel prints, and
// a whole ReadInfiniband pass over the spark fixture (real files, so mostly open/read/close).
// Set RAIL_BENCH_LARGE_TREE=<tree> (made by bench/make_large_tree.py) to also read that tree.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/infiniband.h"
#include "rail/sysfs/read_errors.h"
#include "rail/sysfs/values.h"

namespace {

using rail::sysfs::InfinibandReadOptions;
using rail::sysfs::ReadErrors;
using rail::sysfs::RootedFilesystem;

void BM_ParsePortRate(benchmark::State& state) {
  constexpr std::string_view kRates[] = {"100 Gb/sec (2X HDR)\n", "2.5 Gb/sec (1X SDR)\n",
                                         "400 Gb/sec (4X NDR)\n", "10 Gb/sec\n"};
  std::size_t i = 0;
  for (auto _ : state) {
    auto rate = rail::sysfs::ParsePortRate(kRates[i++ % std::size(kRates)]);
    benchmark::DoNotOptimize(rate);
  }
}
BENCHMARK(BM_ParsePortRate);

void BM_ParseGid(benchmark::State& state) {
  constexpr std::string_view kGids[] = {
      "fe80:0000:0000:0000:32c5:99ff:fe3e:6a18\n",  // link-local (RoCE v1/v2)
      "0000:0000:0000:0000:0000:ffff:0a00:0001\n",  // IPv4-mapped 10.0.0.1
      "fd00:0ab1:0003:0100:0000:0000:0000:0001\n",  // ULA IPv6
      "0000:0000:0000:0000:0000:0000:0000:0000\n",  // empty slot
  };
  std::size_t i = 0;
  for (auto _ : state) {
    auto gid = rail::sysfs::ParseGid(kGids[i++ % std::size(kGids)]);
    benchmark::DoNotOptimize(gid);
  }
}
BENCHMARK(BM_ParseGid);

void BM_ParseCounterText(benchmark::State& state) {
  constexpr std::string_view kCounters[] = {"0\n", "4294967295\n", "18446744073709551615\n",
                                            "N/A (no PMA)\n", "123456789"};
  std::size_t i = 0;
  for (auto _ : state) {
    auto counter = rail::sysfs::ParseCounterText(kCounters[i++ % std::size(kCounters)]);
    benchmark::DoNotOptimize(counter);
  }
}
BENCHMARK(BM_ParseCounterText);

// One full read of every RDMA device of a tree, as one scrape does. Counts files per pass.
void ReadTree(benchmark::State& state, const std::string& sys_root, bool gids) {
  const RootedFilesystem sys(sys_root);
  InfinibandReadOptions options;
  options.gids = gids;
  std::size_t devices = 0;
  std::size_t problems = 0;
  for (auto _ : state) {
    ReadErrors errors;
    auto result = rail::sysfs::ReadInfiniband(sys, options, errors);
    devices = result.size();
    problems = errors.problems().size();
    benchmark::DoNotOptimize(result);
  }
  if (devices == 0) state.SkipWithError("no RDMA device under the tree");
  state.counters["devices"] = static_cast<double>(devices);
  state.counters["read_errors"] = static_cast<double>(problems);
}

void BM_ReadInfinibandSpark(benchmark::State& state) {
  ReadTree(state, RAIL_FIXTURES "/spark-dual-rail/sys", state.range(0) != 0);
}
BENCHMARK(BM_ReadInfinibandSpark)->ArgName("gids")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Registered only when RAIL_BENCH_LARGE_TREE names a generated tree.
const bool kLargeTreeRegistered = [] {
  const char* tree = std::getenv("RAIL_BENCH_LARGE_TREE");
  if (tree == nullptr || *tree == '\0') return false;
  const std::string sys_root = std::string(tree) + "/sys";
  for (const bool gids : {false, true}) {
    benchmark::RegisterBenchmark(
        gids ? "BM_ReadInfinibandLarge/gids:1" : "BM_ReadInfinibandLarge/gids:0",
        [sys_root, gids](benchmark::State& state) { ReadTree(state, sys_root, gids); })
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
