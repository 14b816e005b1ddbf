#include "collectors/registry.h"

#include <functional>

namespace rail::collectors {
namespace {

using Factory = std::unique_ptr<Collector> (*)();

// Scrape order.
constexpr Factory kFactories[] = {
    MakeInfinibandCollector, MakeHwCountersCollector, MakeGidCollector,
    MakeRailsCollector,      MakeNetclassCollector,   MakeNetdevCollector,
    MakeBondingCollector,    MakeEthtoolCollector,    MakePcieCollector,
    MakeQosCollector,        MakeNeighborCollector,   MakeExporterCollector,
    MakeProbeCollector,      MakeResponderCollector,  MakeProbeWorkerCollector,
    MakeGpuDirectCollector,  MakeHealthCollector,     MakeFleetCollector,
};

}  // namespace

const std::vector<CollectorInfo>& KnownCollectors() {
  static const std::vector<CollectorInfo> kCollectors = [] {
    std::vector<CollectorInfo> infos;
    for (const Factory factory : kFactories) {
      const auto collector = factory();
      infos.push_back({collector->Name(), collector->Help(), true});
    }
    return infos;
  }();
  return kCollectors;
}

std::unique_ptr<Collector> MakeCollector(const std::string& name) {
  for (const Factory factory : kFactories) {
    if (auto collector = factory(); collector->Name() == name) return collector;
  }
  return nullptr;
}

void SelectReads(const std::vector<std::string>& collectors, inventory::Sources* sources) {
  Reads wanted;
  for (const auto& name : collectors) {
    const auto collector = MakeCollector(name);
    if (!collector) continue;
    const Reads needs = collector->Needs();
    wanted.port_counters |= needs.port_counters;
    wanted.hw_counters |= needs.hw_counters;
    wanted.gids |= needs.gids;
    wanted.netdev_statistics |= needs.netdev_statistics;
    wanted.fabric |= needs.fabric;
    wanted.qos |= needs.qos;
    wanted.neighbors |= needs.neighbors;
  }
  sources->infiniband.counters = wanted.port_counters;
  sources->infiniband.hw_counters = wanted.hw_counters;
  sources->infiniband.gids = wanted.gids;
  sources->netdev.statistics = wanted.netdev_statistics;
  sources->fabric = wanted.fabric;
  sources->qos = wanted.qos;
  sources->neighbors = wanted.neighbors;
}

}  // namespace rail::collectors
