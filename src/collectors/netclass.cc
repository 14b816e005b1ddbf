// Netdevs of the rails, of the RDMA devices and of bonds: link state, MTU, speed, statistics.
#include <map>

#include "collectors/families.h"
#include "collectors/registry.h"

namespace rail {
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

class NetclassCollector final : public Collector {
 public:
  std::string Name() const override { return "netclass"; }

  void Collect(ScrapeSnapshot& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    auto info = detail::Gauge("rail_netdev_info",
                              "Netdev identity (class/net/<netdev>: address, type); value 1.");
    auto up = detail::Gauge("rail_netdev_up", "1 when operstate is up, else 0.");
    auto carrier = detail::Gauge("rail_netdev_carrier", "Carrier state (carrier): 1 or 0.");
    auto mtu = detail::Gauge("rail_netdev_mtu_bytes", "MTU in bytes (mtu).");
    auto speed = detail::Gauge("rail_netdev_speed_bytes_per_second",
                               "Link speed (speed, Mbit/s) in bytes per second.");
    auto other = detail::Counter("rail_netdev_statistic_total",
                                 "Other netdev statistics (statistics/<statistic>).");
    std::map<std::string, detail::FamilyBuilder> statistics;
    for (const auto& spec : kStatisticMetrics) {
      statistics.emplace(spec.file, detail::Counter(spec.metric, spec.help));
    }

    for (const auto& device : snapshot.NetDevices()) {
      const detail::Labels id = {{"netdev", device.name}};
      info.Add({{"netdev", device.name},
                {"address", device.address.value_or("")},
                {"operstate", device.operstate.value_or("")},
                {"type", device.type ? std::to_string(*device.type) : ""}},
               1);
      if (device.operstate) up.Add(id, *device.operstate == "up" ? 1 : 0);
      if (device.carrier) carrier.Add(id, *device.carrier ? 1 : 0);
      if (device.mtu) mtu.Add(id, static_cast<double>(*device.mtu));
      if (device.speed_mbps && *device.speed_mbps >= 0) {
        speed.Add(id, static_cast<double>(*device.speed_mbps) * 1e6 / 8);
      }
      for (const auto& [file, value] : device.statistics) {
        if (auto named = statistics.find(file); named != statistics.end()) {
          named->second.Add(id, static_cast<double>(value));
        } else {
          other.Add({{"netdev", device.name}, {"statistic", file}}, static_cast<double>(value));
        }
      }
    }
    for (auto* family : {&info, &up, &carrier, &mtu, &speed}) family->MoveTo(out);
    for (const auto& spec : kStatisticMetrics) statistics.at(spec.file).MoveTo(out);
    other.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeNetclassCollector() {
  return std::make_unique<NetclassCollector>();
}

}  // namespace rail
