// The fabric as the rails' NICs count it: `ethtool -S` through the allow-list of each driver
// (nic/fabric_counters.h), and the NICs' temperatures. Each family names the driver statistics it
// comes from in its help; a statistic the driver does not list has no series.
#include <spdlog/spdlog.h>

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
     "{rx,tx}_pfc_ena_frames_pri<p>, ice {rx,tx}_priority_<p>_xoff.nic: XOFF frames only). "
     "Present only for priorities the driver lists."},
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
     "{rx,tx}_pause_frames, ice link_xoff_{rx,tx}.nic: XOFF frames only)."},
    {FabricCounter::kGlobalPauseMicroseconds, "rail_nic_global_pause_seconds_total",
     "Time paused by IEEE 802.3x (global) pause per direction, in seconds (mlx5 "
     "{rx,tx}_global_pause_duration, microseconds in the driver; listed only while global pause "
     "is on). rx: the link partner held this port; tx: this port held its link partner.",
     true, kMicroseconds},
    {FabricCounter::kBufferDiscards, "rail_nic_priority_discards_total",
     "Packets the NIC dropped per priority and cause: buffer (mlx5 rx_prio<p>_buf_discard, no "
     "per-host receive buffer) or congestion (rx_prio<p>_cong_discard)."},
    {FabricCounter::kEcnMarkedPackets, "rail_nic_ecn_marked_packets_total",
     "Packets the NIC ECN-marked per priority for per-host congestion (mlx5 rx_prio<p>_marked)."},
    {FabricCounter::kPortReceiveDiscards, "rail_nic_receive_discards_total",
     "Received packets dropped for want of buffers, by stage: port (mlx5 rx_discards_phy, "
     "bnxt_en rx_stat_discard, ice rx_dropped.nic: the adapter's buffers) or queue (mlx5 "
     "rx_out_of_buffer: the host gave a receive queue no buffer)."},
    {FabricCounter::kPriorityReceiveDiscards, "rail_nic_priority_receive_discards_total",
     "Received packets the port dropped per priority, whatever the cause (mlx5 "
     "rx_prio<p>_discards)."},
    {FabricCounter::kQueueReceiveDiscards, "rail_nic_queue_receive_discards_total",
     "Received packets the port dropped per CoS queue (bnxt_en rx_discard_packets_cos<n>)."},
    {FabricCounter::kRingDiscards, "rail_nic_ring_discards_total",
     "Packets the host's rings dropped per direction, for want of a descriptor (bnxt_en "
     "{rx,tx}_total_ring_discards since Linux 6.6, {rx,tx}_total_discard_pkts before)."},
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
    {FabricCounter::kLaneCorrectedBits, "rail_nic_lane_fec_corrected_bit_errors_total",
     "Bit errors FEC corrected per physical lane (mlx5 rx_err_lane_<n>_phy)."},
    {FabricCounter::kCrcErrors, "rail_nic_crc_errors_total",
     "Frames received with a bad frame check sequence (mlx5 rx_crc_errors_phy, bnxt_en "
     "rx_fcs_err_frames, ice rx_crc_errors.nic)."},
    {FabricCounter::kSymbolErrors, "rail_nic_symbol_errors_total",
     "Symbol errors at the physical layer (mlx5 rx_symbol_err_phy)."},
    {FabricCounter::kFecUncorrectableBlocks, "rail_nic_fec_uncorrectable_blocks_total",
     "FEC blocks that could not be corrected (bnxt_en rx_fec_uncorrectable_blocks)."},
    {FabricCounter::kModuleUnplugs, "rail_nic_module_unplug_events_total",
     "Times the transceiver module was unplugged (mlx5 module_unplug)."},
    {FabricCounter::kReceivedBits, "rail_nic_physical_receive_bytes_total",
     "Everything received at the physical layer, in bytes (bnxt_en rx_bits: bits in the "
     "driver; no released mlx5 driver counts them).",
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
  if (sample.index) {
    labels.push_back(
        {sample.counter == kLaneCorrectedBits ? "lane" : "queue", std::to_string(*sample.index)});
  }
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
           "storms, discards, ECN marks, PCIe stalls, link-down and module events, CRC, symbol "
           "and FEC errors), whether the driver lists any, what of its output did not parse, and "
           "NIC temperatures";
  }
  Reads Needs() const override { return {.fabric = true}; }

  void Collect(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) override {
    CollectStatistics(scrape, out);
    CollectReadState(scrape, out);
    CollectTemperatures(scrape, out);
  }

 private:
  // Whether each netdev's driver listed statistics, and what of its output did not parse:
  // counted per netdev and reason, logged when it changes.
  void CollectReadState(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) {
    auto available = detail::Gauge(
        "rail_nic_statistics_available",
        "1 when the NIC driver of the rail's netdev lists statistics for `ethtool -S`, 0 when it "
        "lists none (EOPNOTSUPP, an empty dump, \"no stats available\"): the checks judged on "
        "the NIC's counters then give no verdict for the rail.");
    for (const auto& [rail, reading] : scrape.Fabric()) {
      available.Add({{"rail", rail}, {"netdev", reading.netdev}}, reading.no_statistics ? 0 : 1);
      errors_[{reading.netdev, "duplicate_name"}] += reading.repeated_names.size();
      errors_[{reading.netdev, "unparsable_line"}] += reading.unparsable;
      LogWhenChanged(reading);
    }
    auto errors = detail::Counter(
        "rail_nic_statistics_errors_total",
        "Statistics of the NIC driver's output that were skipped, per netdev and reason: "
        "duplicate_name (an allow-listed name listed again; the first is kept) and unparsable_line "
        "(a dump "
        "line, or a name of the kernel's answer, that does not parse).");
    for (const auto& [key, count] : errors_) {
      errors.Add({{"netdev", key.first}, {"reason", key.second}}, static_cast<double>(count));
    }
    available.MoveTo(out);
    errors.MoveTo(out);
  }

  void LogWhenChanged(const nic::FabricReading& reading) {
    auto problems = nic::ReadingProblems(reading);
    auto& last = logged_[reading.netdev];
    if (problems == last) return;
    if (problems.empty()) {
      spdlog::info("ethtool -S {}: statistics read cleanly again", reading.netdev);
    } else {
      spdlog::warn("ethtool -S {}: {}", reading.netdev, problems);
    }
    last = std::move(problems);
  }

  std::map<std::pair<std::string, std::string>, std::uint64_t> errors_;
  std::map<std::string, std::string> logged_;  // by netdev: the problems last logged

  static void CollectStatistics(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) {
    auto listed = detail::Gauge("rail_nic_ethtool_statistics",
                                "How many statistics the NIC driver lists for `ethtool -S` of "
                                "the rail's netdev (each slave of a bond); the driver's name in "
                                "`driver`, `mapped` 1 where an allow-list exists for it.");
    auto storms = detail::Counter(
        "rail_nic_pause_storm_events_total",
        "Pause storms the NIC detected, by severity: warning (mlx5 tx_pause_storm_warning_events: "
        "it sent pause for long) and error (tx_pause_storm_error_events: so long that it stopped "
        "sending pause, drops may have followed; bnxt_en continuous_roce_pause_events: its "
        "firmware turned PFC off on the RoCE queue to end a pause flood).");
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
