// RDMA devices and ports: identity, state, rate, PMA counters (bytes, packets, errors),
// saturation of narrow PMA counters (hw_counters/ are the hw_counters collector's), and where a
// port's byte counters come from: software devices (rxe) have no PMA, their netdev counts.
#include <iterator>
#include <string_view>
#include <utility>

#include "collectors/families.h"
#include "collectors/registry.h"
#include "rail/collectors/collector.h"

namespace rail::collectors {
namespace {

using detail::Counter;
using detail::FamilyBuilder;
using detail::Gauge;
using detail::Labels;

struct CounterMetric {
  const char* file;  // ports/<p>/counters/<file>
  const char* metric;
  const char* help;
};

// Metric names follow the exporter's units: data counters are already converted to bytes.
constexpr CounterMetric kCounterMetrics[] = {
    {"port_xmit_data", "rail_port_transmit_bytes_total",
     "Bytes transmitted by the port (counters/port_xmit_data x 4, or counters_ext, or the "
     "netdev's statistics/tx_bytes on rxe: rail_port_bytes_source_info)."},
    {"port_rcv_data", "rail_port_receive_bytes_total",
     "Bytes received by the port (counters/port_rcv_data x 4, or counters_ext, or the netdev's "
     "statistics/rx_bytes on rxe: rail_port_bytes_source_info)."},
    {"port_xmit_packets", "rail_port_transmit_packets_total", "Packets transmitted by the port."},
    {"port_rcv_packets", "rail_port_receive_packets_total", "Packets received by the port."},
    {"unicast_xmit_packets", "rail_port_unicast_transmit_packets_total",
     "Unicast packets transmitted by the port."},
    {"unicast_rcv_packets", "rail_port_unicast_receive_packets_total",
     "Unicast packets received by the port."},
    {"multicast_xmit_packets", "rail_port_multicast_transmit_packets_total",
     "Multicast packets transmitted by the port."},
    {"multicast_rcv_packets", "rail_port_multicast_receive_packets_total",
     "Multicast packets received by the port."},
    {"symbol_error", "rail_port_symbol_errors_total", "Minor link errors detected on the port."},
    {"link_error_recovery", "rail_port_link_error_recoveries_total",
     "Link error recovery procedures completed by the port."},
    {"link_downed", "rail_port_link_downed_total",
     "Times the link failed to recover and went down."},
    {"port_rcv_errors", "rail_port_receive_errors_total", "Received packets containing an error."},
    {"port_rcv_remote_physical_errors", "rail_port_receive_remote_physical_errors_total",
     "Received packets marked with the EBP delimiter."},
    {"port_rcv_switch_relay_errors", "rail_port_receive_switch_relay_errors_total",
     "Received packets discarded because they could not be forwarded."},
    {"port_rcv_discards", "rail_port_receive_discards_total", "Received packets discarded."},
    {"port_xmit_discards", "rail_port_transmit_discards_total",
     "Outbound packets discarded because the port was down or congested."},
    {"port_xmit_constraint_errors", "rail_port_transmit_constraint_errors_total",
     "Packets not transmitted because of outbound raw filtering."},
    {"port_rcv_constraint_errors", "rail_port_receive_constraint_errors_total",
     "Packets discarded because of inbound raw filtering."},
    {"local_link_integrity_errors", "rail_port_local_link_integrity_errors_total",
     "Times local physical errors exceeded the threshold."},
    {"excessive_buffer_overrun_errors", "rail_port_excessive_buffer_overrun_errors_total",
     "Consecutive flow-control update periods with buffer overrun."},
    {"VL15_dropped", "rail_port_vl15_dropped_total", "Incoming VL15 packets dropped."},
    {"port_xmit_wait", "rail_port_transmit_wait_ticks_total",
     "Ticks during which the port had data to send but no flow-control credits."},
};

// The counters/ files a software RDMA device's netdev statistics/ files stand in for.
constexpr std::pair<const char*, const char*> kNetdevCounterFiles[] = {
    {"tx_bytes", "port_xmit_data"},
    {"rx_bytes", "port_rcv_data"},
    {"tx_packets", "port_xmit_packets"},
    {"rx_packets", "port_rcv_packets"},
};

using detail::With;

constexpr std::size_t kNamedCounters = std::size(kCounterMetrics);

// The index of a counters/ file in kCounterMetrics; kNamedCounters for one without a metric.
std::size_t NamedCounterIndex(std::string_view file) {
  for (std::size_t i = 0; i < kNamedCounters; ++i) {
    if (file == kCounterMetrics[i].file) return i;
  }
  return kNamedCounters;
}

// The families of this collector, in exposition order.
struct InfinibandFamilies {
  FamilyBuilder device_info =
      Gauge("rail_infiniband_device_info",
            "RDMA device identity from class/infiniband/<device>; value 1.");
  FamilyBuilder port_info =
      Gauge("rail_port_info",
            "RDMA port facts (link layer, width in lanes, speed class of a lane, LIDs); value 1.");
  FamilyBuilder state =
      Gauge("rail_port_state_id",
            "Logical port state (ports/<p>/state): 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE.");
  FamilyBuilder phys_state =
      Gauge("rail_port_physical_state_id",
            "Physical port state (ports/<p>/phys_state): 5 LinkUp, 3 Disabled.");
  FamilyBuilder active = Gauge("rail_port_active", "1 when the port is ACTIVE and LinkUp, else 0.");
  FamilyBuilder rate = Gauge("rail_port_rate_bytes_per_second",
                             "Port signalling rate (ports/<p>/rate) in bytes per second.");
  // Only pegged counters get a series: a port has up to 20 narrow counters, almost never pegged,
  // and a zero series for each of them was a tenth of the collector's exposition on a large
  // host. The per-port count is always there, so "none pegged" is a reading, not an absence.
  FamilyBuilder saturated =
      Gauge("rail_port_pma_saturated",
            "A PMA counter pegged at its maximum (it stops instead of wrapping); value 1. "
            "Published only for pegged counters: rail_port_pma_saturated_counters counts them.");
  FamilyBuilder saturated_count =
      Gauge("rail_port_pma_saturated_counters",
            "Number of the port's 4/8/16/32-bit PMA counters that pegged at their maximum.");
  FamilyBuilder counter_source = Gauge(
      "rail_port_bytes_source_info",
      "Where the port's byte and packet counters come from (source): counters (the PMA), "
      "counters_ext (its 64-bit copies), netdev_statistics (a software RDMA device without PMA, "
      "rxe: the statistics/ of its parent netdev, named in netdev) or none; value 1.");
  FamilyBuilder other =
      Counter("rail_port_pma_events_total",
              "PMA counter without a dedicated metric (ports/<p>/counters/<counter>).");
  // One family per kCounterMetrics entry, by index: looked up for every counter of every port.
  std::vector<FamilyBuilder> counters = [] {
    std::vector<FamilyBuilder> named;
    named.reserve(kNamedCounters);
    for (const auto& spec : kCounterMetrics) named.push_back(Counter(spec.metric, spec.help));
    return named;
  }();

  void AddDevice(const sysfs::InfinibandDevice& device) {
    device_info.Add({{"device", device.name},
                     {"board_id", device.board_id.value_or("")},
                     {"fw_ver", device.fw_ver.value_or("")},
                     {"hca_type", device.hca_type.value_or("")},
                     {"node_guid", device.node_guid.value_or("")},
                     {"sys_image_guid", device.sys_image_guid.value_or("")},
                     {"node_type", device.node_type.value_or("")}},
                    1);
    for (const auto& port : device.ports) {
      const Labels id = {{"device", device.name}, {"port", std::to_string(port.number)}};
      AddPort(id, port);
      AddCounters(id, port);
      AddCounterSource(id, device, port);
    }
  }

  // The source of the port's data counters; for a software device without PMA, its netdev's
  // statistics/ (read with the counters, InfinibandPort::netdev_statistics) under the port's own
  // names, so that what reads rail_port_*_bytes_total (the dashboards, the rules) sees rxe rails.
  void AddCounterSource(const Labels& id, const sysfs::InfinibandDevice& device,
                        const sysfs::InfinibandPort& port) {
    const sysfs::DataCounterSource source = sysfs::PortDataCounterSource(device, port);
    if (source == sysfs::DataCounterSource::kNetdevStatistics) {
      for (const auto& [statistic, file] : kNetdevCounterFiles) {
        if (const auto value = port.netdev_statistics.find(statistic);
            value != port.netdev_statistics.end()) {
          counters[NamedCounterIndex(file)].Add(id, static_cast<double>(value->second));
        }
      }
    }
    Labels labels = With(id, "source", sysfs::DataCounterSourceName(source));
    counter_source.Add(
        With(std::move(labels), "netdev",
             source == sysfs::DataCounterSource::kNetdevStatistics ? device.parent.value_or("")
                                                                   : ""),
        1);
  }

  void AddPort(const Labels& id, const sysfs::InfinibandPort& port) {
    Labels info = id;
    info.push_back({"link_layer", port.link_layer.value_or("")});
    info.push_back({"width", port.rate ? port.rate->width : ""});
    info.push_back({"speed", port.rate ? port.rate->speed : ""});
    info.push_back({"lid", port.lid ? std::to_string(*port.lid) : ""});
    info.push_back({"sm_lid", port.sm_lid ? std::to_string(*port.sm_lid) : ""});
    port_info.Add(std::move(info), 1);
    if (port.state) state.Add(id, port.state->id);
    if (port.phys_state) phys_state.Add(id, port.phys_state->id);
    active.Add(id, port.IsActive() ? 1 : 0);
    if (port.rate) rate.Add(id, port.rate->BytesPerSecond());
  }

  // Named counters from the best source: counters/, or counters_ext/ where the classic file is
  // narrow or absent (older drivers such as qib keep 64-bit data there).
  void AddCounters(const Labels& id, const sysfs::InfinibandPort& port) {
    int pegged = 0;
    auto check_saturation = [&](const char* file, const sysfs::PortCounter& counter) {
      if (counter.width_bits >= 64 || !counter.saturated) return;
      ++pegged;
      saturated.Add(With(id, "counter", file), 1);
    };
    for (std::size_t i = 0; i < kNamedCounters; ++i) {
      const char* file = kCounterMetrics[i].file;
      const auto* best = sysfs::BestPortCounter(port, file);
      if (best == nullptr) continue;
      counters[i].Add(id, static_cast<double>(best->value));
      check_saturation(file, *best);
    }
    for (const auto& [file, counter] : port.counters) {
      if (NamedCounterIndex(file) != kNamedCounters) continue;
      other.Add(With(id, "counter", file), static_cast<double>(counter.value));
      check_saturation(file.c_str(), counter);
    }
    if (!port.counters.empty() || !port.counters_ext.empty()) saturated_count.Add(id, pegged);
  }

  void MoveTo(std::vector<prometheus::MetricFamily>& out) {
    for (auto* family :
         {&device_info, &port_info, &state, &phys_state, &active, &rate, &counter_source}) {
      family->MoveTo(out);
    }
    for (auto& family : counters) family.MoveTo(out);
    other.MoveTo(out);
    saturated.MoveTo(out);
    saturated_count.MoveTo(out);
  }
};

class InfinibandCollector final : public Collector {
 public:
  std::string Name() const override { return "infiniband"; }
  std::string Help() const override { return "RDMA devices and ports: state, rate, PMA counters"; }
  Reads Needs() const override { return {.port_counters = true}; }

  void Collect(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) override {
    InfinibandFamilies families;
    for (const auto& device : scrape.Devices()) families.AddDevice(device);
    families.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeInfinibandCollector() {
  return std::make_unique<InfinibandCollector>();
}

}  // namespace rail::collectors
