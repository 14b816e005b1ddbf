// Netdevs of the rails, of the RDMA devices and of bonds: identity, link state, MTU, speed (their
// statistics are the netdev collector's).
#include "collectors/families.h"
#include "collectors/registry.h"

namespace rail::collectors {
namespace {

class NetclassCollector final : public Collector {
 public:
  std::string Name() const override { return "netclass"; }
  std::string Help() const override {
    return "The rails' netdevs, bonds and bond slaves: state, MTU, speed, carrier changes";
  }

  void Collect(Scrape& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    auto info = detail::Gauge("rail_netdev_info",
                              "Netdev identity (class/net/<netdev>: address, type); value 1.");
    auto up = detail::Gauge("rail_netdev_up", "1 when operstate is up, else 0.");
    auto carrier = detail::Gauge("rail_netdev_carrier", "Carrier state (carrier): 1 or 0.");
    auto mtu = detail::Gauge("rail_netdev_mtu_bytes", "MTU in bytes (mtu).");
    auto speed = detail::Gauge("rail_netdev_speed_bytes_per_second",
                               "Link speed (speed, Mbit/s) in bytes per second.");
    auto changes = detail::Counter("rail_netdev_carrier_changes_total",
                                   "Carrier changes (carrier_changes): link flaps, and also an "
                                   "administrator's down/up and driver reconfigurations.");
    auto ups = detail::Counter("rail_netdev_carrier_up_changes_total",
                               "Carrier changes to up (carrier_up_count).");
    auto downs = detail::Counter("rail_netdev_carrier_down_changes_total",
                                 "Carrier changes to down (carrier_down_count).");

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
      if (device.carrier_changes) changes.Add(id, static_cast<double>(*device.carrier_changes));
      if (device.carrier_up_count) ups.Add(id, static_cast<double>(*device.carrier_up_count));
      if (device.carrier_down_count) downs.Add(id, static_cast<double>(*device.carrier_down_count));
    }
    for (auto* family : {&info, &up, &carrier, &mtu, &speed, &changes, &ups, &downs}) {
      family->MoveTo(out);
    }
  }
};

}  // namespace

std::unique_ptr<Collector> MakeNetclassCollector() {
  return std::make_unique<NetclassCollector>();
}

}  // namespace rail::collectors
