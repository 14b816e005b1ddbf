// The allow-list: for each driver, the `ethtool -S` names that say something about the fabric, in
// the form of the kernel tables under data/nic-statistics/ (made from the drivers' sources: every
// integer written {n}), which a test holds this list against. The meaning of each name is the
// driver source's (data/nic-statistics/README.md and docs/nic-statistics.md).
#include "rail/nic/fabric_counters.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "rail/sysfs/netclass.h"

namespace rail::nic {
namespace {

using enum FabricCounter;

// What the {n} of a name is.
enum class Number : std::uint8_t { kNone, kPriority, kIndex };

struct Pattern {
  std::string_view name;
  FabricCounter counter;
  Direction direction = Direction::kNone;
  PciOperation operation = PciOperation::kNone;
  Number number = Number::kNone;
};

constexpr Number kPrio = Number::kPriority;

// mlx5: rx_prio{n}_pause* exist only while PFC is on for priority n, {rx,tx}_global_pause_duration
// only while 802.3x pause is on, rx_prio{n}_buf_discard only with the sbcam_reg capability; the
// per-priority discards and marks for every priority the port supports. rx_bits_phy, in the
// kernel's counters.rst, is emitted by no released driver: the corrected-bit ratio uses the port's
// speed instead.
constexpr Pattern kMlx5[] = {
    {"rx_prio{n}_pause", kPfcPauseFrames, Direction::kRx, PciOperation::kNone, kPrio},
    {"tx_prio{n}_pause", kPfcPauseFrames, Direction::kTx, PciOperation::kNone, kPrio},
    {"rx_prio{n}_pause_duration", kPfcPauseMicroseconds, Direction::kRx, PciOperation::kNone,
     kPrio},
    {"tx_prio{n}_pause_duration", kPfcPauseMicroseconds, Direction::kTx, PciOperation::kNone,
     kPrio},
    // mlx5 counts XOFF -> XON transitions of received pause only.
    {"rx_prio{n}_pause_transition", kPfcPauseTransitions, Direction::kRx, PciOperation::kNone,
     kPrio},
    {"rx_pause_ctrl_phy", kGlobalPauseFrames, Direction::kRx},
    {"tx_pause_ctrl_phy", kGlobalPauseFrames, Direction::kTx},
    {"rx_global_pause_duration", kGlobalPauseMicroseconds, Direction::kRx},
    {"tx_global_pause_duration", kGlobalPauseMicroseconds, Direction::kTx},
    {"tx_pause_storm_warning_events", kPauseStormWarnings},
    {"tx_pause_storm_error_events", kPauseStormErrors},
    {"rx_prio{n}_buf_discard", kBufferDiscards, Direction::kNone, PciOperation::kNone, kPrio},
    {"rx_prio{n}_cong_discard", kCongestionDiscards, Direction::kNone, PciOperation::kNone, kPrio},
    {"rx_prio{n}_marked", kEcnMarkedPackets, Direction::kNone, PciOperation::kNone, kPrio},
    {"rx_prio{n}_discards", kPriorityReceiveDiscards, Direction::kNone, PciOperation::kNone, kPrio},
    {"rx_discards_phy", kPortReceiveDiscards},
    {"rx_out_of_buffer", kReceiveQueueOutOfBuffer},
    {"outbound_pci_stalled_rd", kOutboundPciStalledPercent, Direction::kNone, PciOperation::kRead},
    {"outbound_pci_stalled_wr", kOutboundPciStalledPercent, Direction::kNone, PciOperation::kWrite},
    {"outbound_pci_stalled_rd_events", kOutboundPciStalledSeconds, Direction::kNone,
     PciOperation::kRead},
    {"outbound_pci_stalled_wr_events", kOutboundPciStalledSeconds, Direction::kNone,
     PciOperation::kWrite},
    {"link_down_events_phy", kLinkDownEvents},
    {"module_unplug", kModuleUnplugs},
    {"rx_crc_errors_phy", kCrcErrors},
    {"rx_symbol_err_phy", kSymbolErrors},
    {"rx_pcs_symbol_err_phy", kPostFecSymbolErrors},
    {"rx_corrected_bits_phy", kFecCorrectedBits},
    {"rx_err_lane_{n}_phy", kLaneCorrectedBits, Direction::kNone, PciOperation::kNone,
     Number::kIndex},
};

// bnxt_en: its pfc_pri{n}_{rx,tx}_transitions count both edges (XON -> XOFF too) and are not
// taken, rather than mixed with mlx5's meaning. Its receive discards are per CoS queue, not per
// priority (rx_discard_packets_cos{n}, under the port's rx_stat_discard); the ring discards are the
// host's rings running dry (a missing or bad receive descriptor), under the name of each kernel
// (rx_total_discard_pkts until 6.5, rx_total_ring_discards since 6.6). continuous_roce_pause_events
// counts the firmware turning PFC off on the RoCE queue to end a pause flood: a storm.
constexpr Pattern kBnxt[] = {
    {"rx_pfc_ena_frames_pri{n}", kPfcPauseFrames, Direction::kRx, PciOperation::kNone, kPrio},
    {"tx_pfc_ena_frames_pri{n}", kPfcPauseFrames, Direction::kTx, PciOperation::kNone, kPrio},
    {"pfc_pri{n}_rx_duration_us", kPfcPauseMicroseconds, Direction::kRx, PciOperation::kNone,
     kPrio},
    {"pfc_pri{n}_tx_duration_us", kPfcPauseMicroseconds, Direction::kTx, PciOperation::kNone,
     kPrio},
    {"rx_pause_frames", kGlobalPauseFrames, Direction::kRx},
    {"tx_pause_frames", kGlobalPauseFrames, Direction::kTx},
    {"continuous_roce_pause_events", kPauseStormErrors},
    {"rx_stat_discard", kPortReceiveDiscards},
    {"rx_discard_packets_cos{n}", kQueueReceiveDiscards, Direction::kNone, PciOperation::kNone,
     Number::kIndex},
    {"rx_total_discard_pkts", kRingDiscards, Direction::kRx},
    {"tx_total_discard_pkts", kRingDiscards, Direction::kTx},
    {"rx_total_ring_discards", kRingDiscards, Direction::kRx},
    {"tx_total_ring_discards", kRingDiscards, Direction::kTx},
    {"link_down_events", kLinkDownEvents},
    {"rx_fcs_err_frames", kCrcErrors},
    {"rx_pcs_symbol_err", kPostFecSymbolErrors},
    {"rx_fec_uncorrectable_blocks", kFecUncorrectableBlocks},
    {"rx_corrected_bits", kFecCorrectedBits},
    {"rx_bits", kReceivedBits},
};

// ice (E810): pause is counted in frames only (XOFF received and sent, per priority and for 802.3x)
// and never in time. The ".nic" statistics are the port's; rx_dropped.nic is the port's receive
// packet buffer dropping (PRTRPB_RDPC).
constexpr Pattern kIce[] = {
    {"rx_priority_{n}_xoff.nic", kPfcPauseFrames, Direction::kRx, PciOperation::kNone, kPrio},
    {"tx_priority_{n}_xoff.nic", kPfcPauseFrames, Direction::kTx, PciOperation::kNone, kPrio},
    {"link_xoff_rx.nic", kGlobalPauseFrames, Direction::kRx},
    {"link_xoff_tx.nic", kGlobalPauseFrames, Direction::kTx},
    {"rx_dropped.nic", kPortReceiveDiscards},
    {"rx_crc_errors.nic", kCrcErrors},
};

struct DriverTable {
  std::string_view driver;
  std::unordered_map<std::string_view, const Pattern*> by_name;
  std::vector<std::string_view> names;
};

template <std::size_t N>
DriverTable MakeTable(std::string_view driver, const Pattern (&patterns)[N]) {
  DriverTable table{driver, {}, {}};
  for (const auto& pattern : patterns) {
    table.by_name.emplace(pattern.name, &pattern);
    table.names.push_back(pattern.name);
  }
  return table;
}

const std::array<DriverTable, 3>& Tables() {
  static const std::array<DriverTable, 3> kTables = {
      MakeTable("mlx5_core", kMlx5), MakeTable("bnxt_en", kBnxt), MakeTable("ice", kIce)};
  return kTables;
}

const DriverTable* FindTable(std::string_view driver) {
  for (const auto& table : Tables()) {
    if (table.driver == driver) return &table;
  }
  return nullptr;
}

// GeneraliseName into buffers the caller reuses: a scrape maps about 1,800 mlx5 names.
void GeneraliseInto(std::string_view name, std::string* pattern, std::vector<unsigned>* numbers) {
  pattern->clear();
  numbers->clear();
  for (std::size_t at = 0; at < name.size();) {
    if (name[at] < '0' || name[at] > '9') {
      *pattern += name[at++];
      continue;
    }
    std::size_t end = at;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    unsigned number = 0;
    const auto digits = name.substr(at, end - at);
    if (std::from_chars(digits.data(), digits.data() + digits.size(), number).ec == std::errc()) {
      *pattern += "{n}";
      numbers->push_back(number);
    } else {
      *pattern += digits;
    }
    at = end;
  }
}

// Whether `samples` holds `sample`'s counter already (same direction, priority, index, operation).
bool SameCounterMapped(const std::vector<FabricSample>& samples, const FabricSample& sample) {
  return std::any_of(samples.begin(), samples.end(), [&](const FabricSample& other) {
    return other.counter == sample.counter && other.direction == sample.direction &&
           other.priority == sample.priority && other.index == sample.index &&
           other.operation == sample.operation;
  });
}

// The sample of `statistic` (its pattern's numbers in `numbers`), or nullopt where a priority is
// not one (PFC has eight).
std::optional<FabricSample> MakeSample(const Pattern& match, const std::vector<unsigned>& numbers,
                                       const std::string& statistic, std::uint64_t value) {
  FabricSample sample;
  sample.counter = match.counter;
  sample.direction = match.direction;
  sample.operation = match.operation;
  if (match.number != Number::kNone) {
    if (numbers.size() != 1) return std::nullopt;
    if (match.number == Number::kPriority) {
      if (numbers[0] > 7) return std::nullopt;
      sample.priority = numbers[0];
    } else {
      sample.index = numbers[0];
    }
  }
  sample.value = value;
  sample.source = statistic;
  return sample;
}

}  // namespace

bool IsKnownDriver(std::string_view driver) {
  return FindTable(driver) != nullptr;
}

std::vector<std::string_view> AllowListNames(std::string_view driver) {
  const DriverTable* table = FindTable(driver);
  return table == nullptr ? std::vector<std::string_view>{} : table->names;
}

std::string GeneraliseName(std::string_view name, std::vector<unsigned>* numbers) {
  std::string pattern;
  GeneraliseInto(name, &pattern, numbers);
  return pattern;
}

std::vector<FabricSample> MapFabricCounters(std::string_view driver,
                                            const EthtoolStatistics& statistics,
                                            std::vector<std::string>* repeated) {
  std::vector<FabricSample> samples;
  const DriverTable* table = FindTable(driver);
  if (table == nullptr) return samples;
  std::vector<unsigned> numbers;
  std::string pattern;
  // Only allow-listed names can give a series, so only they are checked for repeats: a few dozen
  // rather than every name of the dump.
  std::unordered_set<std::string_view> mapped;
  std::unordered_set<std::string_view> reported;
  const std::size_t count = std::min(statistics.names.size(), statistics.values.size());
  for (std::size_t i = 0; i < count; ++i) {
    const std::string& name = statistics.names[i];
    GeneraliseInto(name, &pattern, &numbers);
    const auto found = table->by_name.find(pattern);
    if (found == table->by_name.end()) continue;
    if (!mapped.insert(name).second) {
      if (repeated != nullptr && reported.insert(name).second) repeated->push_back(name);
      continue;
    }
    auto sample = MakeSample(*found->second, numbers, name, statistics.values[i]);
    // Two names for one counter (a driver listing both a kernel's old and new name) would be two
    // series with one label set: the first is kept.
    if (sample && !SameCounterMapped(samples, *sample)) samples.push_back(std::move(*sample));
  }
  return samples;
}

int ReadFabricReading(const StatisticsSource& source, const sysfs::Filesystem& sys,
                      const std::string& netdev, FabricReading* out, bool read_pause) {
  EthtoolStatistics statistics;
  const int error = source.Read(netdev, &statistics);
  if (error != 0 && error != EOPNOTSUPP) return error;
  out->netdev = netdev;
  auto driver = sysfs::NetDeviceDriver(sys, netdev);
  if (!driver) driver = source.Driver(netdev);
  out->driver = driver.value_or("");
  out->statistics = statistics.names.size();
  out->known_driver = IsKnownDriver(out->driver);
  out->no_statistics = statistics.names.empty();
  out->unparsable = statistics.unparsable;
  out->first_unparsable = std::move(statistics.first_unparsable);
  out->samples = MapFabricCounters(out->driver, statistics, &out->repeated_names);
  if (read_pause) out->pause = source.Pause(netdev);
  return 0;
}

const FabricSample* FindSample(const FabricReading& reading, FabricCounter counter,
                               Direction direction, std::optional<unsigned> priority,
                               PciOperation operation) {
  for (const auto& sample : reading.samples) {
    if (sample.counter == counter && sample.direction == direction && sample.priority == priority &&
        sample.operation == operation && !sample.index) {
      return &sample;
    }
  }
  return nullptr;
}

std::string ReadingProblems(const FabricReading& reading) {
  if (reading.no_statistics && reading.unparsable == 0) return "the driver lists no statistics";
  std::string problems;
  if (!reading.repeated_names.empty()) {
    problems = "names listed more than once (the first kept):";
    for (const auto& name : reading.repeated_names) problems += " " + name;
  }
  if (reading.unparsable > 0) {
    problems += (problems.empty() ? "" : "; ") + std::to_string(reading.unparsable) +
                " line(s) that do not parse, the first: '" + reading.first_unparsable + "'";
  }
  return problems;
}

std::string DescribeReading(const FabricReading& reading) {
  const std::string driver = reading.driver.empty() ? "unknown" : reading.driver;
  std::string text = reading.netdev + ": driver " + driver;
  if (reading.no_statistics) {
    text += " lists no statistics, so nothing its NIC counts can be judged";
  } else {
    text += " lists " + std::to_string(reading.statistics) + " statistics, " +
            std::to_string(reading.samples.size()) + " of them allow-listed";
  }
  if (const auto problems = ReadingProblems(reading); !problems.empty() && !reading.no_statistics) {
    text += " (" + problems + ")";
  }
  if (reading.pause && (reading.pause->rx || reading.pause->tx)) {
    text += std::string("; 802.3x pause is on (rx ") + (reading.pause->rx ? "on" : "off") +
            ", tx " + (reading.pause->tx ? "on" : "off") + ": ethtool -a " + reading.netdev + ")";
  }
  return text;
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
