// The rails this agent watches and probes: one rail_info series per rail.
#include "collectors/families.h"
#include "collectors/registry.h"

namespace rail::collectors {
namespace {

const char* SourceLabel(inventory::RailSource source) {
  return source == inventory::RailSource::kConfigured ? "config" : "discovered";
}

const char* TransportLabel(inventory::TransportClass transport) {
  return transport == inventory::TransportClass::kRdma ? "rdma" : "tcp";
}

class RailsCollector final : public Collector {
 public:
  std::string Name() const override { return "rails"; }
  std::string Help() const override {
    return "The rails (RDMA ports or configured netdevs) and their identity";
  }
  // GIDs give a rail its IPv4 address.
  Reads Needs() const override { return {.gids = true}; }

  void Collect(Scrape& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    auto info = detail::Gauge(
        "rail_info", "A rail: an active RDMA port with its netdev, or a configured rail; value 1.");
    auto present = detail::Gauge(
        "rail_present", "1 when the rail's RDMA device and port (or netdev) exist, else 0.");
    auto active =
        detail::Gauge("rail_active", "1 when the rail's port is ACTIVE and LinkUp, else 0.");
    auto expected = detail::Gauge("rail_expected_rate_bytes_per_second",
                                  "Configured expected rate of the rail in bytes per second.");
    auto rails = detail::Gauge("rail_rails", "Number of rails.");
    for (const auto& rail : snapshot.Rails()) {
      info.Add({{"rail", rail.name},
                {"device", rail.device},
                {"port", rail.port ? std::to_string(rail.port) : ""},
                {"netdev", rail.netdev},
                {"link_layer", rail.link_layer},
                {"ipv4", rail.ipv4},
                {"transport", TransportLabel(rail.transport)},
                {"source", SourceLabel(rail.source)}},
               1);
      present.Add({{"rail", rail.name}}, rail.present ? 1 : 0);
      if (!rail.device.empty()) active.Add({{"rail", rail.name}}, rail.active ? 1 : 0);
      if (rail.expected_rate_gbps) {
        expected.Add({{"rail", rail.name}}, *rail.expected_rate_gbps * 1e9 / 8);
      }
    }
    rails.Add({}, static_cast<double>(snapshot.Rails().size()));
    for (auto* family : {&info, &present, &active, &expected, &rails}) family->MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeRailsCollector() {
  return std::make_unique<RailsCollector>();
}

}  // namespace rail::collectors
