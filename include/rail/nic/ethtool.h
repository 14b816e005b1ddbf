// The statistics a NIC driver lists for `ethtool -S`: names and values as the driver gives them,
// from the kernel (the SIOCETHTOOL ioctl) or from recorded dumps (fixture trees). Nothing here
// knows what a name means: fabric_counters.h maps the names of known drivers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rail/sysfs/filesystem.h"

namespace rail::nic {

// One netdev's statistics, names[i] for values[i], in the driver's order.
struct EthtoolStatistics {
  std::vector<std::string> names;
  std::vector<std::uint64_t> values;
};

// Where statistics come from. Read and Driver may be called from several threads at once.
class StatisticsSource {
 public:
  virtual ~StatisticsSource() = default;
  // Fills `out` and returns 0, or returns an errno value: ENODEV (no such netdev), EOPNOTSUPP (its
  // driver lists no statistics), ENOENT (no dump recorded for it), EAGAIN (the driver's list
  // changed while it was read, twice in a row).
  virtual int Read(const std::string& netdev, EthtoolStatistics* out) const = 0;
  // The driver's name as `ethtool -i` prints it ("mlx5_core", "bnxt_en", "veth"), or nullopt.
  virtual std::optional<std::string> Driver(const std::string& netdev) const = 0;
};

// The kernel's answer for this process's network namespace: ETHTOOL_GSSET_INFO (ETH_SS_STATS),
// ETHTOOL_GSTRINGS and ETHTOOL_GSTATS on every Read, ETHTOOL_GDRVINFO for Driver. None of them
// needs a capability. The names are read again on every Read: their count is no key, since mlx5
// renames its per-priority counters when PFC moves from one priority to another without changing
// how many there are.
std::unique_ptr<StatisticsSource> MakeKernelStatisticsSource();
// One such source for the whole process, made on first use: the scrape and the probes share it.
const StatisticsSource& KernelStatistics();

// Recorded dumps under `dumps` (a fixture tree's ethtool/ folder): <netdev> holds what `ethtool -S
// <netdev>` printed and <netdev>.info what `ethtool -i <netdev>` printed.
class DumpStatisticsSource final : public StatisticsSource {
 public:
  explicit DumpStatisticsSource(const sysfs::Filesystem& dumps) : dumps_(dumps) {}
  int Read(const std::string& netdev, EthtoolStatistics* out) const override;
  std::optional<std::string> Driver(const std::string& netdev) const override;

 private:
  const sysfs::Filesystem& dumps_;
};

// Parses `ethtool -S` output ("NIC statistics:" then "     <name>: <value>" lines). A name may
// itself hold ": " (bnxt_en's "[0]: rx_ucast_packets"), so the value follows the last one. Lines
// that do not parse are skipped; nullopt when none parses.
std::optional<EthtoolStatistics> ParseEthtoolDump(std::string_view text);

// The "driver:" line of `ethtool -i` output, or nullopt.
std::optional<std::string> ParseDriverInfo(std::string_view text);

}  // namespace rail::nic
