// The fabric as the rails' NICs count it: `ethtool -S` through the allow-list of each driver
// (nic/fabric_counters.h), and the NICs' temperatures. Each family names the driver statistics it
// comes from in its help; a statistic the driver does not list has no series.
#include <map>

#include "collectors/families.h"
#include "collectors/registry.h"

namespace rail::collectors {
namespace {

using nic::FabricCounter;

struct FamilySpec {
  FabricCounter counter;
  const char* name;
  const char* help;
  bool counter_type = true;
  double scale = 1.0;
};

constexpr double kMicroseconds = 1e-6;

constexpr FamilySpec kFamilies[] = {
    {FabricCounter::kPfcPauseFrames, "rail_nic_pfc_pause_frames_total",
     "PFC pause frames per direction and priority (mlx5 {rx,tx}_prio<p>_pause, bnxt_en "
     "{rx,tx}_pfc_ena_frames_pri<p>). Present only for priorities the driver lists."},
    {FabricCounter::kPfcPauseMicroseconds, "rail_nic_pfc_pause_seconds_total",
     "Time paused per direction and priority, in seconds (mlx5 {rx,tx}_prio<p>_pause_duration, "
     "bnxt_en pfc_pri<p>_{rx,tx}_duration_us; microseconds in the driver). rx: this port's "
     "transmitter was held by its link partner; tx: this port paused its link partner.",
     true, kMicroseconds},
    {FabricCounter::kPfcPauseTransitions, "rail_nic_pfc_pause_transitions_total",
     "XOFF to XON transitions of received PFC pause per priority (mlx5 "
     "rx_prio<p>_pause_transition)."},
    {FabricCounter::kGlobalPauseFrames, "rail_nic_global_pause_frames_total",
     "IEEE 802.3x (global) pause frames per direction (mlx5 {rx,tx}_pause_ctrl_phy, bnxt_en "
     "{rx,tx}_pause_frames)."},
    {FabricCounter::kBufferDiscards, "rail_nic_priority_discards_total",
     "Packets the NIC dropped per priority and cause: buffer (mlx5 rx_prio<p>_buf_discard, no "
     "per-host receive buffer) or congestion (rx_prio<p>_cong_discard)."},
    {FabricCounter::kEcnMarkedPackets, "rail_nic_ecn_marked_packets_total",
     "Packets the NIC ECN-marked per priority for per-host congestion (mlx5 rx_prio<p>_marked)."},
    {FabricCounter::kPortReceiveDiscards, "rail_nic_receive_discards_total",
     "Received packets dropped for want of buffers, by stage: port (mlx5 rx_discards_phy) or "
     "queue (rx_out_of_buffer: a receive queue had no software buffer)."},
    {FabricCounter::kOutboundPciStalledPercent, "rail_nic_outbound_pci_stalled_ratio",
     "Share of the last second in which the NIC had outbound PCIe reads or writes it could not "
     "issue for want of credits (mlx5 outbound_pci_stalled_{rd,wr}, percent in the driver).",
     false, 0.01},
    {FabricCounter::kOutboundPciStalledSeconds, "rail_nic_outbound_pci_stalled_seconds_total",
     "Seconds in which outbound PCIe reads or writes were stalled more than 30% of the time "
     "(mlx5 outbound_pci_stalled_{rd,wr}_events)."},
    {FabricCounter::kLinkDownEvents, "rail_nic_link_down_events_total",
     "Times the physical link went down as the NIC counts them (mlx5 link_down_events_phy, "
     "bnxt_en link_down_events): unlike carrier changes, no administrative down/up."},
    {FabricCounter::kPostFecSymbolErrors, "rail_nic_post_fec_symbol_errors_total",
     "Symbol errors FEC did not correct (mlx5 rx_pcs_symbol_err_phy, bnxt_en rx_pcs_symbol_err)."},
    {FabricCounter::kFecCorrectedBits, "rail_nic_fec_corrected_bit_errors_total",
     "Bit errors FEC corrected (mlx5 rx_corrected_bits_phy, bnxt_en rx_corrected_bits); their "
     "rate over 8 times the rate of rail_nic_physical_receive_bytes_total is the corrected-bit "
     "ratio."},
    {FabricCounter::kReceivedBits, "rail_nic_physical_receive_bytes_total",
     "Everything received at the physical layer, in bytes (mlx5 rx_bits_phy, bnxt_en rx_bits: "
     "bits in the driver).",
     true, 1.0 / 8},
};

// The storm events share one family, by severity; the two discard causes share another, and so
// do the two receive-discard stages.
const FamilySpec* SpecOf(FabricCounter counter) {
  switch (counter) {
    case FabricCounter::kCongestionDiscards:
      counter = FabricCounter::kBufferDiscards;
      break;
    case FabricCounter::kReceiveQueueOutOfBuffer:
      counter = FabricCounter::kPortReceiveDiscards;
      break;
    default:
      break;
  }
  for (const auto& spec : kFamilies) {
    if (spec.counter == counter) return &spec;
  }
  return nullptr;
}

void AddLabels(const nic::FabricSample& sample, detail::Labels& labels) {
  using enum FabricCounter;
  if (sample.direction != nic::Direction::kNone) {
    labels.push_back({"direction", nic::DirectionName(sample.direction)});
  }
  if (sample.priority) labels.push_back({"priority", std::to_string(*sample.priority)});
  if (sample.operation != nic::PciOperation::kNone) {
    labels.push_back({"operation", nic::PciOperationName(sample.operation)});
  }
  if (sample.counter == kBufferDiscards) labels.push_back({"cause", "buffer"});
  if (sample.counter == kCongestionDiscards) labels.push_back({"cause", "congestion"});
  if (sample.counter == kPortReceiveDiscards) labels.push_back({"stage", "port"});
  if (sample.counter == kReceiveQueueOutOfBuffer) labels.push_back({"stage", "queue"});
  if (sample.counter == kPauseStormWarnings) labels.push_back({"severity", "warning"});
  if (sample.counter == kPauseStormErrors) labels.push_back({"severity", "error"});
}

class EthtoolCollector final : public Collector {
 public:
  std::string Name() const override { return "ethtool"; }
  std::string Help() const override {
    return "The rails' NIC statistics (ethtool -S, an allow-list per driver: PFC and pause, "
           "storms, discards, ECN marks, PCIe stalls, link-down events, FEC) and NIC "
           "temperatures";
  }
  Reads Needs() const override { return {.fabric = true}; }

  void Collect(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) override {
    CollectStatistics(scrape, out);
    CollectTemperatures(scrape, out);
  }

 private:
  static void CollectStatistics(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) {
    auto listed = detail::Gauge("rail_nic_ethtool_statistics",
                                "How many statistics the NIC driver lists for `ethtool -S` of "
                                "the rail's netdev (each slave of a bond); the driver's name in "
                                "`driver`, `mapped` 1 where an allow-list exists for it.");
    auto storms = detail::Counter(
        "rail_nic_pause_storm_events_total",
        "Pause storms the NIC detected, by severity: warning (mlx5 tx_pause_storm_warning_events: "
        "it sent pause for long) and error (tx_pause_storm_error_events: so long that it stopped "
        "sending pause; drops may have followed).");
    std::map<const FamilySpec*, detail::FamilyBuilder> families;
    for (const auto& spec : kFamilies) {
      families.emplace(&spec, spec.counter_type ? detail::Counter(spec.name, spec.help)
                                                : detail::Gauge(spec.name, spec.help));
    }
    for (const auto& [rail, reading] : scrape.Fabric()) {
      listed.Add({{"rail", rail},
                  {"netdev", reading.netdev},
                  {"driver", reading.driver},
                  {"mapped", reading.known_driver ? "1" : "0"}},
                 static_cast<double>(reading.statistics));
      for (const auto& sample : reading.samples) {
        detail::Labels labels = {{"rail", rail}, {"netdev", reading.netdev}};
        AddLabels(sample, labels);
        if (sample.counter == FabricCounter::kPauseStormWarnings ||
            sample.counter == FabricCounter::kPauseStormErrors) {
          storms.Add(std::move(labels), static_cast<double>(sample.value));
          continue;
        }
        const FamilySpec* spec = SpecOf(sample.counter);
        if (spec == nullptr) continue;
        families.at(spec).Add(std::move(labels), static_cast<double>(sample.value) * spec->scale);
      }
    }
    listed.MoveTo(out);
    storms.MoveTo(out);
    for (const auto& spec : kFamilies) families.at(&spec).MoveTo(out);
  }

  static void CollectTemperatures(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) {
    auto celsius = detail::Gauge("rail_nic_temperature_celsius",
                                 "Temperature of a sensor of the rail's NIC (class/hwmon/<hwmon>/"
                                 "temp<n>_input, millidegrees in the file).");
    auto critical = detail::Gauge("rail_nic_temperature_critical_celsius",
                                  "Critical temperature of that sensor (temp<n>_crit).");
    for (const auto& [rail, hwmon, sensor] : scrape.NicTemperatures()) {
      const detail::Labels labels = {{"rail", rail},
                                     {"hwmon", hwmon},
                                     {"sensor", sensor.sensor},
                                     {"label", sensor.label.value_or("")}};
      if (sensor.celsius) celsius.Add(labels, *sensor.celsius);
      if (sensor.critical_celsius) critical.Add(labels, *sensor.critical_celsius);
    }
    celsius.MoveTo(out);
    critical.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeEthtoolCollector() {
  return std::make_unique<EthtoolCollector>();
}

}  // namespace rail::collectors
