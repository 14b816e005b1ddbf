// The evidence of the windowed checks: which counter samples are recorded for each rail, under
// which key, and how a check asks for their rise within the window.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rail/health/checks.h"

namespace rail::health::detail {

// Records this scrape's counters of every rail: the NIC's allow-listed ethtool statistics, the
// netdevs' carrier_down_count, the IB port's link_downed and the RDMA hw_counters the checks read.
void ObserveFabric(const HealthInputs& inputs, base::TimePoint now, CounterHistory& history);

// The rise within the window of an ethtool sample of `reading`, or nullopt (no history, first
// sample, just reset).
std::optional<CounterDelta> SampleDelta(const HealthInputs& inputs, const std::string& rail,
                                        const nic::FabricReading& reading,
                                        const nic::FabricSample& sample);
// Of the rail netdev's carrier_down_count.
std::optional<CounterDelta> CarrierDownDelta(const HealthInputs& inputs, const std::string& rail,
                                             const std::string& netdev);
// Of the rail's IB port counter (counters/<file>) or hw counter (hw_counters/<file>).
std::optional<CounterDelta> PortCounterDelta(const HealthInputs& inputs, const std::string& rail,
                                             const std::string& file);
std::optional<CounterDelta> HwCounterDelta(const HealthInputs& inputs, const std::string& rail,
                                           const std::string& file);

// The rail's readings (one per netdev; a bond's slaves each).
std::vector<const nic::FabricReading*> RailReadings(const HealthInputs& inputs,
                                                    const std::string& rail);

// "5m" / "90s": a span for reasons.
std::string SpanText(base::Duration span);

// The hw counters the checks read (hw_counters/<file>).
inline constexpr const char* kRoceHwCounters[] = {"rp_cnp_ignored", "np_ecn_marked_roce_packets",
                                                  "np_cnp_sent", "out_of_sequence",
                                                  "packet_seq_err"};

}  // namespace rail::health::detail
