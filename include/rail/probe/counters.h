// Counter cross-check: which rail's counters moved while a probe ran. RDMA rails read the port's
// data counters (counters/port_xmit_data in 4-byte words, converted, or their counters_ext/
// copies); software RDMA devices without PMA (rxe, siw) and netdev-only rails (TCP, the lab's
// veths) read class/net/<netdev>/statistics/tx_bytes and rx_bytes. A NIC without PMA counters
// has none: its netdev does not count RDMA traffic.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "rail/probe/fabric_evidence.h"
#include "rail/probe/result.h"
#include "rail/sysfs/filesystem.h"

namespace rail::probe {

struct RailCounterSample {
  std::uint64_t transmit_bytes = 0;
  std::uint64_t receive_bytes = 0;
  bool valid = false;  // false when the counters could not be read
};

using RailCounterSnapshot = std::map<std::string, RailCounterSample>;  // by rail name

class RailCounterReader {
 public:
  // `statistics`: where the fabric evidence's `ethtool -S` comes from; the kernel's when null.
  explicit RailCounterReader(const sysfs::Filesystem& sys,
                             const nic::StatisticsSource* statistics = nullptr)
      : sys_(sys), fabric_(sys, statistics) {}
  RailCounterSample Read(const ProbeRail& rail) const;
  RailCounterSnapshot Snapshot(const std::vector<ProbeRail>& rails) const;
  // The probed rails' fabric evidence is read alongside their bytes.
  const FabricEvidenceReader& fabric() const { return fabric_; }

 private:
  const sysfs::Filesystem& sys_;
  FabricEvidenceReader fabric_;
};

// Per-rail deltas of `probed` rails with each one's share of their transmitted bytes; a counter
// that went backwards (device reset) counts what it reads now, the bytes since the reset.
// `other_rails_bytes` receives the bytes transmitted on rails present in both snapshots but not
// probed.
std::vector<RailCounterDelta> CounterDeltas(const RailCounterSnapshot& before,
                                            const RailCounterSnapshot& after,
                                            const std::vector<std::string>& probed,
                                            std::uint64_t* other_rails_bytes);
// The deltas of the rails in `after` that are not `probed` (share 0), in rail name order.
std::vector<RailCounterDelta> OtherRailDeltas(const RailCounterSnapshot& before,
                                              const RailCounterSnapshot& after,
                                              const std::vector<std::string>& probed);
// What rail_probe_other_rails_transmit_bytes reports: the bytes transmitted on the rails of
// `result.counters` that the run did not probe, leaving out `ours` (rails this agent's other runs
// used meanwhile, OwnRuns): their bytes are this agent's, not traffic the run should be told of.
std::uint64_t OtherRailsTransmitBytes(const ProbeResult& result, const std::set<std::string>& ours);

}  // namespace rail::probe
