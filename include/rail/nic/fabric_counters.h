// What a rail's NIC says about the fabric: PFC and global pause, pause storms, discards, ECN marks,
// PCIe back-pressure, link-down and module events, CRC, symbol and FEC errors, mapped from the
// driver's `ethtool -S` names by a table per driver (mlx5_core, bnxt_en, ice). An allow-list whose
// every name is one the driver's own source emits (data/nic-statistics/, checked by a test): every
// other statistic is ignored, and a counter the driver does not list (mlx5 lists its per-priority
// pause counters only while PFC is on for that priority) is absent, never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rail/nic/ethtool.h"
#include "rail/sysfs/filesystem.h"

namespace rail::nic {

enum class FabricCounter : std::uint8_t {
  kPfcPauseFrames,             // per {direction, priority}: PFC pause frames
  kPfcPauseMicroseconds,       // per {direction, priority}: time paused, µs
  kPfcPauseTransitions,        // per {direction, priority}: XOFF -> XON transitions
  kGlobalPauseFrames,          // per direction: 802.3x pause frames
  kPauseStormWarnings,         // the NIC sent pause for long (a warning, transmission goes on)
  kPauseStormErrors,           // ... so long that it stopped sending pause (drops may follow)
  kBufferDiscards,             // per priority: dropped for want of a per-host receive buffer
  kCongestionDiscards,         // per priority: dropped for per-host congestion
  kEcnMarkedPackets,           // per priority: ECN-marked by the NIC for per-host congestion
  kPortReceiveDiscards,        // dropped at the port for want of buffers (rx_discards_phy)
  kReceiveQueueOutOfBuffer,    // a receive queue had no software buffer (rx_out_of_buffer)
  kOutboundPciStalledPercent,  // per operation (read, write): gauge, % of the last second
  kOutboundPciStalledSeconds,  // per operation: seconds in which the stall was above 30%
  kLinkDownEvents,             // the physical link went down
  kPostFecSymbolErrors,        // symbol errors FEC did not correct
  kFecCorrectedBits,           // bits FEC corrected
  kReceivedBits,               // bits received: the denominator of the two above
  kPriorityReceiveDiscards,    // per priority: received packets the port dropped (any cause)
  kQueueReceiveDiscards,       // per CoS queue (index): received packets the port dropped
  kRingDiscards,               // per direction: the host's rings dropped (bnxt_en ring discards)
  kGlobalPauseMicroseconds,    // per direction: time paused by 802.3x pause, µs
  kCrcErrors,                  // frames received with a bad FCS
  kSymbolErrors,               // symbol errors at the physical layer (before FEC)
  kFecUncorrectableBlocks,     // FEC blocks that could not be corrected
  kLaneCorrectedBits,          // per lane (index): bits FEC corrected on that lane
  kModuleUnplugs,              // the transceiver module was unplugged
  kLastFabricCounter = kModuleUnplugs,
};

enum class Direction : std::uint8_t { kNone, kRx, kTx };
enum class PciOperation : std::uint8_t { kNone, kRead, kWrite };

struct FabricSample {
  FabricCounter counter;
  Direction direction = Direction::kNone;
  std::optional<unsigned> priority;  // 0-7, for the per-priority counters
  PciOperation operation = PciOperation::kNone;
  std::uint64_t value = 0;
  std::string source;  // the driver's statistic name, for reasons and docs
  // The lane of kLaneCorrectedBits, the CoS queue of kQueueReceiveDiscards.
  std::optional<unsigned> index{};
};

// One netdev's fabric counters and where they came from.
struct FabricReading {
  std::string netdev;
  std::string driver;                 // as the kernel names it; "" when unknown
  std::size_t statistics = 0;         // how many statistics the driver listed
  std::vector<FabricSample> samples;  // in the driver's order
  bool known_driver = false;          // a mapping table exists for `driver`
  // The driver listed no statistics at all (EOPNOTSUPP, an empty dump, "no stats available"):
  // nothing about this netdev's NIC can be judged, which is not the same as nothing wrong.
  bool no_statistics = false;
  // Allow-listed names the driver listed more than once (each here once, however often
  // repeated): the first occurrence is the one mapped, the others are dropped.
  std::vector<std::string> repeated_names{};
  // Lines (dumps) or names (the kernel's strings) that did not parse, and the first of them.
  std::size_t unparsable = 0;
  std::string first_unparsable{};
  // Its 802.3x pause settings (`ethtool -a`), where asked for and readable.
  std::optional<PauseParameters> pause{};
};

// Whether `driver` ("mlx5_core", "bnxt_en", "ice") has a mapping table.
bool IsKnownDriver(std::string_view driver);

// The allow-list of `driver`: its statistic names in the kernel tables' form (every integer written
// {n}, as data/nic-statistics/<driver>.tsv has them); empty for an unknown driver.
std::vector<std::string_view> AllowListNames(std::string_view driver);

// `name` with every run of decimal digits replaced by {n}, and those numbers in order:
// "rx_prio3_pause" -> "rx_prio{n}_pause", {3}. A run too long for an unsigned is not a number and
// stays as it is.
std::string GeneraliseName(std::string_view name, std::vector<unsigned>* numbers);

// The allow-listed counters among `statistics` for `driver`; none for an unknown driver. An
// allow-listed name listed more than once is mapped at its first occurrence only, and named in
// `repeated` (when given) once; repeats of other names give no series and are not looked for.
std::vector<FabricSample> MapFabricCounters(std::string_view driver,
                                            const EthtoolStatistics& statistics,
                                            std::vector<std::string>* repeated = nullptr);

// Reads `netdev`'s statistics from `source` and maps them into `out`: 0, or Read's errno. A driver
// that lists no statistics (EOPNOTSUPP, or nothing that parses) gives 0 with out->no_statistics.
// The driver is the netdev's device/driver link under `sys` (no ioctl; virtual netdevs have none),
// else the source's answer. The 802.3x pause settings are read only with `read_pause`: mlx5 asks
// its firmware for them, and only qos_config needs them.
int ReadFabricReading(const StatisticsSource& source, const sysfs::Filesystem& sys,
                      const std::string& netdev, FabricReading* out, bool read_pause = false);

// The first sample of `counter` matching direction, priority and operation, without an index (a
// lane or a queue), or nullptr.
const FabricSample* FindSample(const FabricReading& reading, FabricCounter counter,
                               Direction direction = Direction::kNone,
                               std::optional<unsigned> priority = std::nullopt,
                               PciOperation operation = PciOperation::kNone);

// What of the driver's answer was skipped, for people; "" when nothing was: names listed more than
// once, lines that do not parse (and the first of them), or that it lists no statistics at all.
std::string ReadingProblems(const FabricReading& reading);
// One netdev's reading for people (doctor): the driver, how many statistics and how many of them
// allow-listed, ReadingProblems, and 802.3x pause where it is on.
std::string DescribeReading(const FabricReading& reading);

const char* DirectionName(Direction direction);        // "rx", "tx", ""
const char* PciOperationName(PciOperation operation);  // "read", "write", ""

}  // namespace rail::nic
