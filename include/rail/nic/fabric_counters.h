// What a rail's NIC says about the fabric: PFC and global pause, pause storms, discards, ECN marks,
// PCIe back-pressure, link-down events and FEC, mapped from the driver's `ethtool -S` names by a
// table per driver (mlx5_core and bnxt_en). An allow-list: every other statistic is ignored, and a
// counter the driver does not list (mlx5 lists its per-priority pause counters only while PFC is on
// for that priority) is absent, never 0.
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
};

// One netdev's fabric counters and where they came from.
struct FabricReading {
  std::string netdev;
  std::string driver;                 // as the kernel names it; "" when unknown
  std::size_t statistics = 0;         // how many statistics the driver listed
  std::vector<FabricSample> samples;  // in the driver's order
  bool known_driver = false;          // a mapping table exists for `driver`
};

// Whether `driver` ("mlx5_core", "bnxt_en") has a mapping table.
bool IsKnownDriver(std::string_view driver);

// The allow-listed counters among `statistics` for `driver`; none for an unknown driver.
std::vector<FabricSample> MapFabricCounters(std::string_view driver,
                                            const EthtoolStatistics& statistics);

// Reads `netdev`'s statistics from `source` and maps them into `out`: 0, or Read's errno. The
// driver is the netdev's device/driver link under `sys` (no ioctl; virtual netdevs have none),
// else the source's answer.
int ReadFabricReading(const StatisticsSource& source, const sysfs::Filesystem& sys,
                      const std::string& netdev, FabricReading* out);

// The first sample of `counter` matching direction, priority and operation, or nullptr.
const FabricSample* FindSample(const FabricReading& reading, FabricCounter counter,
                               Direction direction = Direction::kNone,
                               std::optional<unsigned> priority = std::nullopt,
                               PciOperation operation = PciOperation::kNone);

const char* DirectionName(Direction direction);        // "rx", "tx", ""
const char* PciOperationName(PciOperation operation);  // "read", "write", ""

}  // namespace rail::nic
