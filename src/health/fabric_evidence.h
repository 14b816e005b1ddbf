// The evidence of the fabric checks: which counter samples are recorded for each rail, under
// which key, and how a rule asks how much a rail's counters rose. The rules (one per check, in the
// check's file) read rises through RailRises, so that one rule judges both the scrapes' history
// over health.fabric_window (the windowed checks) and a probe run's start and end (the diagnosis
// of a failing probe_throughput).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rail/health/checks.h"

namespace rail::health::detail {

// The one counters/ file ObserveFabric records (the hw_counters/ ones: nic::FabricHwCounterFiles).
inline constexpr std::string_view kSampledPortCounter = "link_downed";

// Records one reading of every rail's counters, as `inputs` hold them, at `now`: the NIC's
// allow-listed ethtool statistics, the netdevs' carrier_down_count, the IB port's link_downed and
// the RDMA hw_counters the checks read. `readings_before`: history.Readings() before the reading
// began (CounterHistory::Record); left out, too, when the history's latest reading is less than
// `spacing` old. Returns whether it was recorded.
bool ObserveFabric(const HealthInputs& inputs, std::uint64_t readings_before, base::TimePoint now,
                   base::Duration spacing, CounterHistory& history);

// The spacing of a scrape's readings: half health.fabric_sample_interval. A Prometheus scraping at
// least that often has each scrape record what it read and leaves the fabric sampler nothing to
// read; one scraping faster, or two replicas a second apart, share one reading, so the history
// holds at most a window's worth at that spacing. 0 with the interval at 0: every scrape records.
base::Duration ScrapeReadingSpacing(const Thresholds& thresholds);

// How much a rail's fabric counters rose over some span; nullopt where a counter gives no rise
// (not read, first sample, just reset). Made by WindowRises or RunRises.
class RailRises {
 public:
  using SampleRise = std::function<std::optional<CounterDelta>(const nic::FabricReading&,
                                                               const nic::FabricSample&)>;
  // By the counter's path: "carrier_down_count" (the rail's netdev), "counters/<file>" and
  // "hw_counters/<file>" (its RDMA port).
  using CounterRise = std::function<std::optional<CounterDelta>(const std::string& path)>;
  using SpanWords = std::function<std::string(const CounterDelta&)>;

  // The rail's names and line rate, for reasons and for ratios to the bits on the wire.
  struct Rail {
    std::string netdev;                          // "" when none
    std::string port;                            // "mlx5_0 port 1", "" when none
    std::optional<double> line_bits_per_second;  // the port's speed, when known
  };

  RailRises(std::vector<const nic::FabricReading*> readings, SampleRise sample, CounterRise counter,
            SpanWords span, Rail rail)
      : readings_(std::move(readings)),
        sample_(std::move(sample)),
        counter_(std::move(counter)),
        span_(std::move(span)),
        rail_(std::move(rail)) {}

  // The rail's NIC readings (one per netdev; a bond's slaves each).
  const std::vector<const nic::FabricReading*>& Readings() const { return readings_; }
  // Of a sample of one of Readings().
  std::optional<CounterDelta> Sample(const nic::FabricReading& reading,
                                     const nic::FabricSample& sample) const {
    return sample_(reading, sample);
  }
  // Of the first sample of `counter` in `reading` (nic::FindSample), which `found` receives.
  std::optional<CounterDelta> Rise(const nic::FabricReading& reading, nic::FabricCounter counter,
                                   const nic::FabricSample** found) const;
  // Calls `each` with every reading's first sample of `counter` that gives a rise.
  using EachRiseFunction =
      std::function<void(const nic::FabricReading&, const nic::FabricSample&, const CounterDelta&)>;
  void EachRise(nic::FabricCounter counter, const EachRiseFunction& each) const;
  // Of the rail netdev's carrier_down_count.
  std::optional<CounterDelta> CarrierDown() const { return counter_("carrier_down_count"); }
  // Of the rail's IB port counter (counters/<file>) or hw counter (hw_counters/<file>).
  std::optional<CounterDelta> PortCounter(const std::string& file) const {
    return counter_("counters/" + file);
  }
  std::optional<CounterDelta> HwCounter(const std::string& file) const {
    return counter_("hw_counters/" + file);
  }
  // What a rise spans, for reasons: "the last 5m", "the run".
  std::string Span(const CounterDelta& rise) const { return span_(rise); }

  // Calls `each` with every sample of `counter` in every reading that gives a rise (the
  // per-priority, per-lane and per-queue ones included).
  void EachSampleRise(nic::FabricCounter counter, const EachRiseFunction& each) const;

  const std::string& netdev() const { return rail_.netdev; }
  const std::string& port() const { return rail_.port; }
  std::optional<double> LineBitsPerSecond() const { return rail_.line_bits_per_second; }

 private:
  std::vector<const nic::FabricReading*> readings_;
  SampleRise sample_;
  CounterRise counter_;
  SpanWords span_;
  Rail rail_;
};

// The rail's names and line rate as RailRises reports them.
RailRises::Rail RailNames(const HealthInputs& inputs, const inventory::Rail& rail);
// A rail's rises within health.fabric_window, from inputs.history.
RailRises WindowRises(const HealthInputs& inputs, const inventory::Rail& rail);
// A rail's rises during one probe run.
RailRises RunRises(const probe::RailFabricEvidence& evidence, RailRises::Rail rail);

// What one rule found on a rail: whether it could judge (some counter it reads gave a rise), and
// each fault it found, for reasons.
struct Findings {
  bool judged = false;
  std::vector<std::string> faults;
};

// The rules, one in the file of the check that judges by it; each reads its thresholds.
Findings PauseFindings(const RailRises& rises, const Thresholds& limits);        // pfc_pause
Findings GlobalPauseFindings(const RailRises& rises, const Thresholds& limits);  // global_pause
Findings StormFindings(const RailRises& rises, const Thresholds& limits);        // pfc_storm
Findings DropFindings(const RailRises& rises, const Thresholds& limits);         // roce_drops
Findings RetransmissionFindings(const RailRises& rises,
                                const Thresholds& limits);  // roce_retransmissions
Findings PortDiscardFindings(const RailRises& rises, const Thresholds& limits);  // port_discards
Findings HostStarvationFindings(const RailRises& rises,
                                const Thresholds& limits);  // host_receive_starvation
Findings LinkDownFindings(const RailRises& rises, const Thresholds& limits);   // link_flaps
Findings LinkErrorFindings(const RailRises& rises, const Thresholds& limits);  // link_errors
Findings CongestionControlFindings(const RailRises& rises,
                                   const Thresholds& limits);  // roce_congestion_control

using Rule = Findings (*)(const RailRises&, const Thresholds&);

// The skeleton of every windowed check: for each rail (RoCE rails only when `ethernet_only`), the
// rule over health.fabric_window becomes a verdict, failing with `advice(faults)` as its reason; a
// rail the rule cannot judge gets none.
void CheckWindowed(const HealthInputs& inputs, const char* check, Rule rule,
                   const std::function<std::string(const std::string& faults)>& advice,
                   std::vector<CheckResult>& out, bool ethernet_only = false);

// The rise per second, 0 for a rise of no span.
double PerSecond(const CounterDelta& rise);

// "5m" / "90s": a span for reasons.
std::string SpanText(base::Duration span);

}  // namespace rail::health::detail
