// The rails' link partners as lldpd heard them over LLDP, and per rail why none could be read.
// Nothing is exported from memory: a neighbour appears only while lldpd holds it.
#include "collectors/families.h"
#include "collectors/registry.h"

namespace rail::collectors {
namespace {

using detail::Labels;
using detail::With;

class NeighborFamilies {
 public:
  void Add(const inventory::RailNeighbors& rail) {
    const Labels labels = {{"rail", rail.rail}, {"netdev", rail.netdev}};
    source_.Add(With(labels, {{"state", inventory::NeighborStateName(rail.state)},
                              {"remedy", rail.remedy}}),
                1);
    for (const auto& announcement : rail.announcements) {
      const auto& neighbor = announcement.neighbor;
      const Labels port =
          With(labels, {{"chassis_id", neighbor.chassis_id}, {"port_id", neighbor.port_id}});
      info_.Add(With(port, {{"system_name", neighbor.system_name},
                            {"port_description", neighbor.port_description},
                            {"vlan", neighbor.vlan ? std::to_string(*neighbor.vlan) : ""}}),
                1);
      age_.Add(port, announcement.age_seconds);
    }
  }

  void MoveTo(std::vector<prometheus::MetricFamily>& out) {
    for (auto* family : {&source_, &info_, &age_}) family->MoveTo(out);
  }

 private:
  detail::FamilyBuilder source_ = detail::Gauge(
      "rail_link_neighbor_source_info",
      "Why the rail's LLDP neighbour is or is not known: state=\"ok\" (lldpd heard it), "
      "\"no_neighbor\" (lldpd runs on the netdev and heard nothing within the last TTL), "
      "\"not_watched\" (lldpd does not run on the netdev), \"no_lldpd\" (no lldpd on the socket), "
      "\"lldpd_error\" (its socket could not be asked), \"firmware_lldp_agent\" (the NIC's "
      "firmware runs LLDP and takes the frames: ice's fw-lldp-agent), \"infiniband\" (no LLDP), "
      "\"no_netdev\"; remedy is the command that fixes it, or empty; value 1.");
  detail::FamilyBuilder info_ = detail::Gauge(
      "rail_link_neighbor_info",
      "The rail's link partner as lldpd last heard it over LLDP: the switch's system name and "
      "chassis id, its port id and description, the port VLAN (PVID, empty when not announced); "
      "value 1, only while lldpd holds the neighbour.");
  detail::FamilyBuilder age_ = detail::Gauge(
      "rail_link_neighbor_age_seconds",
      "Seconds since lldpd last saw the neighbour's announcement change (first heard or a TLV "
      "changed; lldpd's age, not the last frame): lldpd forgets a neighbour whose TTL ran out.");
};

class NeighborCollector final : public Collector {
 public:
  std::string Name() const override { return "neighbor"; }
  std::string Help() const override {
    return "each rail's LLDP link partner (switch name and port) through lldpd's socket";
  }
  Reads Needs() const override {
    Reads reads;
    reads.neighbors = true;
    return reads;
  }

  void Collect(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) override {
    NeighborFamilies families;
    for (const auto& rail : scrape.Neighbors()) families.Add(rail);
    families.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeNeighborCollector() {
  return std::make_unique<NeighborCollector>();
}

}  // namespace rail::collectors
