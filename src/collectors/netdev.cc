// Traffic and error statistics of the netdevs the netclass collector reports
// (class/net/<netdev>/statistics/). Apart from netclass, as node_exporter keeps netdev apart from
// netclass: about 25 files per netdev, read only when this collector is on.
#include <map>

#include "collectors/families.h"
#include "collectors/registry.h"

namespace rail::collectors {
namespace {

struct StatisticMetric {
  const char* file;  // class/net/<netdev>/statistics/<file>
  const char* metric;
  const char* help;
};

constexpr StatisticMetric kStatisticMetrics[] = {
    {"tx_bytes", "rail_netdev_transmit_bytes_total", "Bytes transmitted (statistics/tx_bytes)."},
    {"rx_bytes", "rail_netdev_receive_bytes_total", "Bytes received (statistics/rx_bytes)."},
    {"tx_packets", "rail_netdev_transmit_packets_total",
     "Packets transmitted (statistics/tx_packets)."},
    {"rx_packets", "rail_netdev_receive_packets_total",
     "Packets received (statistics/rx_packets)."},
    {"tx_errors", "rail_netdev_transmit_errors_total", "Transmit errors (statistics/tx_errors)."},
    {"rx_errors", "rail_netdev_receive_errors_total", "Receive errors (statistics/rx_errors)."},
    {"tx_dropped", "rail_netdev_transmit_dropped_total",
     "Transmit packets dropped (statistics/tx_dropped)."},
    {"rx_dropped", "rail_netdev_receive_dropped_total",
     "Receive packets dropped (statistics/rx_dropped)."},
};

class NetdevCollector final : public Collector {
 public:
  std::string Name() const override { return "netdev"; }
  std::string Help() const override {
    return "Those netdevs' traffic and error statistics (statistics/)";
  }
  Reads Needs() const override { return {.netdev_statistics = true}; }

  void Collect(Scrape& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    auto other = detail::Counter("rail_netdev_statistic_total",
                                 "Other netdev statistics (statistics/<statistic>).");
    std::map<std::string, detail::FamilyBuilder> statistics;
    for (const auto& spec : kStatisticMetrics) {
      statistics.emplace(spec.file, detail::Counter(spec.metric, spec.help));
    }
    for (const auto& device : snapshot.NetDevices()) {
      for (const auto& [file, value] : device.statistics) {
        if (auto named = statistics.find(file); named != statistics.end()) {
          named->second.Add({{"netdev", device.name}}, static_cast<double>(value));
        } else {
          other.Add({{"netdev", device.name}, {"statistic", file}}, static_cast<double>(value));
        }
      }
    }
    for (const auto& spec : kStatisticMetrics) statistics.at(spec.file).MoveTo(out);
    other.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeNetdevCollector() {
  return std::make_unique<NetdevCollector>();
}

}  // namespace rail::collectors
