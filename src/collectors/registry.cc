#include "collectors/registry.h"

#include <functional>
#include <map>

namespace rail {

const std::vector<CollectorInfo>& KnownCollectors() {
  static const std::vector<CollectorInfo> kCollectors = {
      {"infiniband", "RDMA devices and ports: state, rate, PMA counters", true},
      {"hw_counters", "RDMA ports' vendor hw counters (hw_counters/)", true},
      {"gid", "RDMA ports' GID tables: GID, RoCE type, netdev, IPv4", true},
      {"rails", "The rails (RDMA ports or configured netdevs) and their identity", true},
      {"netclass", "The rails' netdevs, bonds and bond slaves: state, MTU, speed", true},
      {"netdev", "Those netdevs' traffic and error statistics (statistics/)", true},
      {"bonding", "Bonds: mode, slaves, slave state and link failures", true},
      {"exporter", "The agent itself: build, RDMA device count, process figures", true},
      {"probe", "Results of the scheduled probes and the peers' versions", true},
      {"responder", "The responder answering other agents' probes", true},
      {"health", "Health checks of the rails and peers: verdicts and reasons", true},
  };
  return kCollectors;
}

std::unique_ptr<Collector> MakeCollector(const std::string& name) {
  static const std::map<std::string, std::function<std::unique_ptr<Collector>()>> kFactories = {
      {"infiniband", MakeInfinibandCollector}, {"gid", MakeGidCollector},
      {"rails", MakeRailsCollector},           {"netclass", MakeNetclassCollector},
      {"bonding", MakeBondingCollector},       {"exporter", MakeExporterCollector},
      {"probe", MakeProbeCollector},           {"responder", MakeResponderCollector},
      {"health", MakeHealthCollector},         {"hw_counters", MakeHwCountersCollector},
      {"netdev", MakeNetdevCollector},
  };
  const auto factory = kFactories.find(name);
  return factory == kFactories.end() ? nullptr : factory->second();
}

}  // namespace rail
