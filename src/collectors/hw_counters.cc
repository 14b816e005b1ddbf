// Vendor hardware counters of the RDMA ports (ports/<p>/hw_counters/): on RoCE the congestion,
// retransmission and buffer events (np_cnp_sent, out_of_sequence, out_of_buffer, ...). A
// collector of its own because they are most of a large host's files (50-100 per port): an
// operator can switch them off, and the scrape duration shows their cost apart.
#include "collectors/families.h"
#include "collectors/registry.h"

namespace rail::collectors {
namespace {

// hw_counters that are settings rather than event counts.
bool IsHwSetting(const std::string& name) {
  return name == "lifespan";
}

class HwCountersCollector final : public Collector {
 public:
  std::string Name() const override { return "hw_counters"; }
  std::string Help() const override { return "RDMA ports' vendor hw counters (hw_counters/)"; }
  Reads Needs() const override { return {.hw_counters = true}; }

  void Collect(Scrape& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    auto hw = detail::Counter("rail_port_hw_events_total",
                              "Vendor hardware counter (ports/<p>/hw_counters/<counter>).");
    for (const auto& device : snapshot.Devices()) {
      for (const auto& port : device.ports) {
        const std::string number = std::to_string(port.number);
        for (const auto& [name, value] : port.hw_counters) {
          if (IsHwSetting(name)) continue;
          hw.Add({{"device", device.name}, {"port", number}, {"counter", name}},
                 static_cast<double>(value));
        }
      }
    }
    hw.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeHwCountersCollector() {
  return std::make_unique<HwCountersCollector>();
}

}  // namespace rail::collectors
