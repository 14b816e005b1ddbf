// The statistics a NIC driver lists for `ethtool -S`: names and values as the driver gives them,
// from the kernel (the SIOCETHTOOL ioctl) or from recorded dumps (fixture trees). Nothing here
// knows what a name means: fabric_counters.h maps the names of known drivers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rail/sysfs/filesystem.h"

namespace rail::nic {

// One netdev's statistics, names[i] for values[i], in the driver's order, and what was skipped.
struct EthtoolStatistics {
  std::vector<std::string> names;
  std::vector<std::uint64_t> values;
  // Lines of a dump, or names of the kernel's answer, that did not parse (an empty name, a byte
  // outside printable ASCII, a value that is no unsigned 64-bit number), and the first of them.
  std::size_t unparsable = 0;
  std::string first_unparsable;
};

// The netdev's 802.3x pause settings, as `ethtool -a` shows them (ETHTOOL_GPAUSEPARAM).
struct PauseParameters {
  bool autoneg = false;
  bool rx = false;  // honours received pause frames
  bool tx = false;  // sends pause frames
  bool operator==(const PauseParameters&) const = default;
};

// One of a driver's private flags, as `ethtool --show-priv-flags` lists it (ETH_SS_PRIV_FLAGS
// names, ETHTOOL_GPFLAGS bits). ice's "fw-lldp-agent" says whether the NIC's firmware runs LLDP.
struct PrivateFlag {
  std::string name;
  bool on = false;
  bool operator==(const PrivateFlag&) const = default;
};

// Where statistics come from. Read and Driver may be called from several threads at once.
class StatisticsSource {
 public:
  virtual ~StatisticsSource() = default;
  // Fills `out` and returns 0 (`out` may hold no statistic, only what did not parse), or returns
  // an errno value: ENODEV (no such netdev), EOPNOTSUPP (its driver lists no statistics), ENOENT
  // (no dump recorded for it), EAGAIN (the driver's list changed while it was read, twice in a
  // row).
  virtual int Read(const std::string& netdev, EthtoolStatistics* out) const = 0;
  // The driver's name as `ethtool -i` prints it ("mlx5_core", "bnxt_en", "veth"), or nullopt.
  virtual std::optional<std::string> Driver(const std::string& netdev) const = 0;
  // The netdev's 802.3x pause settings, or nullopt where they cannot be read.
  virtual std::optional<PauseParameters> Pause(const std::string& /*netdev*/) const {
    return std::nullopt;
  }
  // The netdev's private flags in the driver's order (empty: its driver has none), or nullopt
  // where they cannot be read (no such netdev, nothing recorded).
  virtual std::optional<std::vector<PrivateFlag>> PrivateFlags(
      const std::string& /*netdev*/) const {
    return std::nullopt;
  }
};

// The kernel's answer for this process's network namespace: ETHTOOL_GSSET_INFO (ETH_SS_STATS),
// ETHTOOL_GSTRINGS and ETHTOOL_GSTATS on every Read, ETHTOOL_GDRVINFO for Driver,
// ETHTOOL_GPAUSEPARAM for Pause, ETHTOOL_GSSET_INFO (ETH_SS_PRIV_FLAGS), ETHTOOL_GSTRINGS and
// ETHTOOL_GPFLAGS for PrivateFlags. None of them needs a capability. The names are read again on
// every Read: their count is no key, since mlx5 renames its per-priority counters when PFC moves
// from one priority to another without changing how many there are.
std::unique_ptr<StatisticsSource> MakeKernelStatisticsSource();
// One such source for the whole process, made on first use: the scrape and the probes share it.
const StatisticsSource& KernelStatistics();

// Recorded dumps under `dumps` (a fixture tree's ethtool/ folder): <netdev> holds what `ethtool -S
// <netdev>` printed, <netdev>.info what `ethtool -i <netdev>` printed and <netdev>.pause, where
// recorded, what `ethtool -a <netdev>` printed, and <netdev>.priv-flags what `ethtool
// --show-priv-flags <netdev>` printed.
class DumpStatisticsSource final : public StatisticsSource {
 public:
  explicit DumpStatisticsSource(const sysfs::Filesystem& dumps) : dumps_(dumps) {}
  int Read(const std::string& netdev, EthtoolStatistics* out) const override;
  std::optional<std::string> Driver(const std::string& netdev) const override;
  std::optional<PauseParameters> Pause(const std::string& netdev) const override;
  std::optional<std::vector<PrivateFlag>> PrivateFlags(const std::string& netdev) const override;

 private:
  const sysfs::Filesystem& dumps_;
};

// Parses `ethtool -S` output ("NIC statistics:" then "     <name>: <value>" lines). A name may
// itself hold ": " (bnxt_en's "[0]: rx_ucast_packets"), so the value follows the last one. Lines
// that do not parse are skipped and counted; the header, blank lines and ethtool's "no stats
// available" are not errors. No statistic at all: the driver lists none.
EthtoolStatistics ParseEthtoolDump(std::string_view text);

// Decodes the kernel's answers to ETHTOOL_GSTRINGS (`strings`: one name per ETH_GSTRING_LEN bytes,
// NUL-padded) and ETHTOOL_GSTATS (`values`, as many). Names that are empty or hold a byte outside
// printable ASCII are skipped and counted, so that nothing the driver sends reaches a label or a
// reason unchecked.
EthtoolStatistics DecodeStatistics(std::string_view strings, std::span<const std::uint64_t> values);

// `ethtool -a` output ("Autonegotiate:", "RX:", "TX:" lines, on or off), or nullopt when a line
// is missing.
std::optional<PauseParameters> ParsePauseParameters(std::string_view text);

// `ethtool --show-priv-flags` output ("Private flags for <netdev>:" then "<name> : on|off"
// lines), or nullopt when a line is neither. No flag line at all: the driver has none.
std::optional<std::vector<PrivateFlag>> ParsePrivateFlags(std::string_view text);

// The "driver:" line of `ethtool -i` output, or nullopt.
std::optional<std::string> ParseDriverInfo(std::string_view text);

}  // namespace rail::nic
