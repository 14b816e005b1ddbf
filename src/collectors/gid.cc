// GID tables: which GIDs exist, their RoCE type, netdev and IPv4 address. Empty (all-zero)
// slots are not published, and by default only the entries GidEntryScope names.
#include <optional>
#include <string>

#include "collectors/families.h"
#include "collectors/registry.h"

namespace rail::collectors {
namespace {

bool Published(GidEntryScope scope, const sysfs::InfinibandPort& port,
               const sysfs::GidEntry& entry) {
  if (scope == GidEntryScope::kAll || !port.IsEthernet()) return true;
  return entry.type == sysfs::GidType::kRoceV2 && entry.gid.IsIpv4Mapped();
}

class GidCollector final : public Collector {
 public:
  std::string Name() const override { return "gid"; }
  std::string Help() const override {
    return "RDMA ports' GID tables: GID, RoCE type, netdev, IPv4";
  }
  Reads Needs() const override { return {.gids = true}; }

  void Collect(Scrape& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    auto info = detail::Gauge(
        "rail_gid_info",
        "GID table entry (ports/<p>/gids/<index>, gid_attrs/types, gid_attrs/ndevs); by default "
        "only RoCE v2 entries with an IPv4 address and InfiniBand ports' entries "
        "(--collector.gid.entries); value 1.");
    auto count = detail::Gauge("rail_gid_entries",
                               "Number of non-empty GID table entries, published or not.");
    const GidEntryScope scope = snapshot.sources().gid_entries;
    for (const auto& device : snapshot.Devices()) {
      for (const auto& port : device.ports) {
        const std::string port_label = std::to_string(port.number);
        for (const auto& entry : port.gids) {
          if (!Published(scope, port, entry)) continue;
          info.Add({{"device", device.name},
                    {"port", port_label},
                    {"index", std::to_string(entry.index)},
                    {"gid", entry.gid.ToString()},
                    {"type", entry.type ? sysfs::GidTypeLabel(*entry.type) : ""},
                    {"netdev", entry.netdev.value_or("")},
                    {"ipv4", entry.gid.Ipv4().value_or("")}},
                   1);
        }
        count.Add({{"device", device.name}, {"port", port_label}},
                  static_cast<double>(port.gids.size()));
      }
    }
    info.MoveTo(out);
    count.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeGidCollector() {
  return std::make_unique<GidCollector>();
}

}  // namespace rail::collectors
