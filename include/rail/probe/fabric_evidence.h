// The fabric evidence of a probe run (RailFabricEvidence): the counters that tell congestion and
// link faults apart from a slow host, read on each probed rail at the run's start and end, as the
// byte counters are (counters.h). The same counters the windowed fabric checks judge over
// health.fabric_window: the NIC's allow-listed `ethtool -S` statistics (nic/fabric_counters.h),
// the RDMA port's hw_counters and link_downed, and the netdev's carrier_down_count.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rail/nic/ethtool.h"
#include "rail/nic/fabric_counters.h"
#include "rail/nic/rdma_counters.h"
#include "rail/probe/result.h"
#include "rail/sysfs/filesystem.h"

namespace rail::probe {

// Whether a NIC counter is evidence of a run: every allow-listed counter but the PCIe stall
// gauge, whose difference means nothing.
bool IsRunEvidence(nic::FabricCounter counter);

// One reading of a rail's evidence counters.
struct RailFabricSample {
  std::chrono::steady_clock::time_point at;
  std::vector<nic::FabricReading> nic;  // evidence samples only; readings without any left out
  std::map<std::string, std::uint64_t> counters;  // as RailFabricEvidence::counters, values
};

// The rise of every counter read in both samples; a counter lower at the end was reset and is
// left out, as is one of a netdev read at one end only.
RailFabricEvidence FabricEvidence(const std::string& rail, const RailFabricSample& before,
                                  const RailFabricSample& after);

class FabricEvidenceReader {
 public:
  // `statistics`: where `ethtool -S` comes from (recorded dumps in tests); the kernel's when null.
  explicit FabricEvidenceReader(const sysfs::Filesystem& sys,
                                const nic::StatisticsSource* statistics = nullptr);
  RailFabricSample Read(const ProbeRail& rail) const;

 private:
  const sysfs::Filesystem& sys_;
  const nic::StatisticsSource& statistics_;
};

}  // namespace rail::probe
