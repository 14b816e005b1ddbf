// Bonds: mode and hash policy, how many slaves are up, each slave's state, speed and link
// failures. The TCP/bond path is one of the paths the agent compares with the RDMA rails.
#include <charconv>

#include "collectors/families.h"
#include "collectors/registry.h"

namespace rail::collectors {
namespace {

// "100000 Mbps" from /proc/net/bonding; "Unknown" while the slave is down.
std::optional<double> ProcSpeedBytesPerSecond(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  double megabits = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), megabits);
  if (error != std::errc() || end == text->data()) return std::nullopt;
  return megabits * 1e6 / 8;
}

bool IsUp(const std::optional<std::string>& mii_status) {
  return mii_status && *mii_status == "up";
}

class BondingCollector final : public Collector {
 public:
  std::string Name() const override { return "bonding"; }
  std::string Help() const override { return "Bonds: mode, slaves, slave state and link failures"; }

  void Collect(Scrape& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    auto info = detail::Gauge(
        "rail_bond_info", "Bond configuration (bonding/mode, bonding/xmit_hash_policy); value 1.");
    auto up = detail::Gauge("rail_bond_up", "1 when the bond's MII status is up, else 0.");
    auto slaves = detail::Gauge("rail_bond_slaves", "Number of slaves (bonding/slaves).");
    auto active =
        detail::Gauge("rail_bond_active_slaves", "Number of slaves whose MII status is up.");
    auto slave_up = detail::Gauge(
        "rail_bond_slave_up", "1 when the slave's MII status is up (bonding_slave/mii_status).");
    auto slave_active =
        detail::Gauge("rail_bond_slave_active",
                      "1 when the slave's bonding state is active (bonding_slave/state).");
    auto failures =
        detail::Counter("rail_bond_slave_link_failures_total",
                        "Link failures of the slave (bonding_slave/link_failure_count).");
    auto speed = detail::Gauge("rail_bond_slave_speed_bytes_per_second",
                               "Slave speed reported by /proc/net/bonding, in bytes per second.");

    for (const auto& bond : snapshot.Bonds()) {
      const detail::Labels id = {{"bond", bond.name}};
      info.Add({{"bond", bond.name},
                {"mode", bond.mode.value_or("")},
                {"xmit_hash_policy", bond.xmit_hash_policy.value_or("")},
                {"active_slave", bond.active_slave.value_or("")}},
               1);
      if (bond.mii_status) up.Add(id, IsUp(bond.mii_status) ? 1 : 0);
      slaves.Add(id, static_cast<double>(bond.slaves.size()));
      int slaves_up = 0;
      for (const auto& slave : bond.slaves) {
        const detail::Labels slave_id = {{"bond", bond.name}, {"slave", slave.name}};
        if (IsUp(slave.mii_status)) ++slaves_up;
        if (slave.mii_status) slave_up.Add(slave_id, IsUp(slave.mii_status) ? 1 : 0);
        if (slave.state) slave_active.Add(slave_id, *slave.state == "active" ? 1 : 0);
        if (slave.link_failure_count) {
          failures.Add(slave_id, static_cast<double>(*slave.link_failure_count));
        }
        if (const auto bytes = ProcSpeedBytesPerSecond(slave.proc_speed)) {
          speed.Add(slave_id, *bytes);
        }
      }
      active.Add(id, slaves_up);
    }
    for (auto* family :
         {&info, &up, &slaves, &active, &slave_up, &slave_active, &failures, &speed}) {
      family->MoveTo(out);
    }
  }
};

}  // namespace

std::unique_ptr<Collector> MakeBondingCollector() {
  return std::make_unique<BondingCollector>();
}

}  // namespace rail::collectors
