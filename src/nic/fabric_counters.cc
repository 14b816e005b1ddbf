// The allow-list: for each driver, the `ethtool -S` names that say something about the fabric, as
// patterns in which {p} stands for a priority (0-7). Names from the kernel's mlx5 ethtool counter
// documentation (counters.rst) and bnxt_en's bnxt_ethtool.c.
#include "rail/nic/fabric_counters.h"

#include <array>
#include <string>
#include <unordered_map>

#include "rail/sysfs/netclass.h"

namespace rail::nic {
namespace {

using enum FabricCounter;

struct Pattern {
  std::string_view name;
  FabricCounter counter;
  Direction direction = Direction::kNone;
  PciOperation operation = PciOperation::kNone;
};

// mlx5: rx_prio{p}_* and tx_prio{p}_* exist only while PFC is on for priority p; the per-priority
// discards and marks for every priority the port supports.
constexpr Pattern kMlx5[] = {
    {"rx_prio{p}_pause", kPfcPauseFrames, Direction::kRx},
    {"tx_prio{p}_pause", kPfcPauseFrames, Direction::kTx},
    {"rx_prio{p}_pause_duration", kPfcPauseMicroseconds, Direction::kRx},
    {"tx_prio{p}_pause_duration", kPfcPauseMicroseconds, Direction::kTx},
    // mlx5 counts XOFF -> XON transitions of received pause only.
    {"rx_prio{p}_pause_transition", kPfcPauseTransitions, Direction::kRx},
    {"rx_pause_ctrl_phy", kGlobalPauseFrames, Direction::kRx},
    {"tx_pause_ctrl_phy", kGlobalPauseFrames, Direction::kTx},
    {"tx_pause_storm_warning_events", kPauseStormWarnings},
    {"tx_pause_storm_error_events", kPauseStormErrors},
    {"rx_prio{p}_buf_discard", kBufferDiscards},
    {"rx_prio{p}_cong_discard", kCongestionDiscards},
    {"rx_prio{p}_marked", kEcnMarkedPackets},
    {"rx_discards_phy", kPortReceiveDiscards},
    {"rx_out_of_buffer", kReceiveQueueOutOfBuffer},
    {"outbound_pci_stalled_rd", kOutboundPciStalledPercent, Direction::kNone, PciOperation::kRead},
    {"outbound_pci_stalled_wr", kOutboundPciStalledPercent, Direction::kNone, PciOperation::kWrite},
    {"outbound_pci_stalled_rd_events", kOutboundPciStalledSeconds, Direction::kNone,
     PciOperation::kRead},
    {"outbound_pci_stalled_wr_events", kOutboundPciStalledSeconds, Direction::kNone,
     PciOperation::kWrite},
    {"link_down_events_phy", kLinkDownEvents},
    {"rx_pcs_symbol_err_phy", kPostFecSymbolErrors},
    {"rx_corrected_bits_phy", kFecCorrectedBits},
    {"rx_bits_phy", kReceivedBits},
};

// bnxt_en: its pfc_pri{p}_{rx,tx}_transitions count both edges (XON -> XOFF too), and its discards
// are per CoS queue, not per priority: neither is taken, rather than mixed with mlx5's meaning.
constexpr Pattern kBnxt[] = {
    {"rx_pfc_ena_frames_pri{p}", kPfcPauseFrames, Direction::kRx},
    {"tx_pfc_ena_frames_pri{p}", kPfcPauseFrames, Direction::kTx},
    {"pfc_pri{p}_rx_duration_us", kPfcPauseMicroseconds, Direction::kRx},
    {"pfc_pri{p}_tx_duration_us", kPfcPauseMicroseconds, Direction::kTx},
    {"rx_pause_frames", kGlobalPauseFrames, Direction::kRx},
    {"tx_pause_frames", kGlobalPauseFrames, Direction::kTx},
    {"link_down_events", kLinkDownEvents},
    {"rx_pcs_symbol_err", kPostFecSymbolErrors},
    {"rx_corrected_bits", kFecCorrectedBits},
    {"rx_bits", kReceivedBits},
};

struct DriverTable {
  std::string_view driver;
  std::unordered_map<std::string_view, const Pattern*> by_name;
};

template <std::size_t N>
DriverTable MakeTable(std::string_view driver, const Pattern (&patterns)[N]) {
  DriverTable table{driver, {}};
  for (const auto& pattern : patterns) table.by_name.emplace(pattern.name, &pattern);
  return table;
}

const std::array<DriverTable, 2>& Tables() {
  static const std::array<DriverTable, 2> kTables = {MakeTable("mlx5_core", kMlx5),
                                                     MakeTable("bnxt_en", kBnxt)};
  return kTables;
}

const DriverTable* FindTable(std::string_view driver) {
  for (const auto& table : Tables()) {
    if (table.driver == driver) return &table;
  }
  return nullptr;
}

// "rx_prio3_pause" -> "rx_prio{p}_pause" and 3; "pfc_pri5_rx_duration_us" -> "pfc_pri{p}_..." and
// 5: the first "pri"/"prio" followed by one digit 0-7 and no further digit. Names without one
// come back unchanged.
std::optional<unsigned> Generalise(std::string_view name, std::string* pattern) {
  pattern->assign(name);
  for (std::size_t at = name.find("pri"); at != std::string_view::npos;
       at = name.find("pri", at + 1)) {
    std::size_t digit = at + 3;
    if (digit < name.size() && name[digit] == 'o') ++digit;
    if (digit >= name.size() || name[digit] < '0' || name[digit] > '7') continue;
    if (digit + 1 < name.size() && name[digit + 1] >= '0' && name[digit + 1] <= '9') continue;
    pattern->replace(digit, 1, "{p}");
    return static_cast<unsigned>(name[digit] - '0');
  }
  return std::nullopt;
}

}  // namespace

bool IsKnownDriver(std::string_view driver) {
  return FindTable(driver) != nullptr;
}

std::vector<FabricSample> MapFabricCounters(std::string_view driver,
                                            const EthtoolStatistics& statistics) {
  std::vector<FabricSample> samples;
  const DriverTable* table = FindTable(driver);
  if (table == nullptr) return samples;
  std::string pattern;
  const std::size_t count = std::min(statistics.names.size(), statistics.values.size());
  for (std::size_t i = 0; i < count; ++i) {
    const std::string& name = statistics.names[i];
    const auto priority = Generalise(name, &pattern);
    const auto found = table->by_name.find(pattern);
    if (found == table->by_name.end()) continue;
    const Pattern& match = *found->second;
    FabricSample sample;
    sample.counter = match.counter;
    sample.direction = match.direction;
    sample.priority = priority;
    sample.operation = match.operation;
    sample.value = statistics.values[i];
    sample.source = name;
    samples.push_back(std::move(sample));
  }
  return samples;
}

int ReadFabricReading(const StatisticsSource& source, const sysfs::Filesystem& sys,
                      const std::string& netdev, FabricReading* out) {
  EthtoolStatistics statistics;
  if (const int error = source.Read(netdev, &statistics); error != 0) return error;
  out->netdev = netdev;
  auto driver = sysfs::NetDeviceDriver(sys, netdev);
  if (!driver) driver = source.Driver(netdev);
  out->driver = driver.value_or("");
  out->statistics = statistics.names.size();
  out->known_driver = IsKnownDriver(out->driver);
  out->samples = MapFabricCounters(out->driver, statistics);
  return 0;
}

const FabricSample* FindSample(const FabricReading& reading, FabricCounter counter,
                               Direction direction, std::optional<unsigned> priority,
                               PciOperation operation) {
  for (const auto& sample : reading.samples) {
    if (sample.counter == counter && sample.direction == direction && sample.priority == priority &&
        sample.operation == operation) {
      return &sample;
    }
  }
  return nullptr;
}

const char* DirectionName(Direction direction) {
  switch (direction) {
    case Direction::kRx:
      return "rx";
    case Direction::kTx:
      return "tx";
    case Direction::kNone:
      break;
  }
  return "";
}

const char* PciOperationName(PciOperation operation) {
  switch (operation) {
    case PciOperation::kRead:
      return "read";
    case PciOperation::kWrite:
      return "write";
    case PciOperation::kNone:
      break;
  }
  return "";
}

}  // namespace rail::nic
