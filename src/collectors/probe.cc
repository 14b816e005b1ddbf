// Probe results: success, throughput, round-trip latency, transports, counter shares, CPU. Reads
// the result store only; a scrape never waits for a probe. The striping and version judgements
// are health's verdicts (multirail_striping, peer_version), published here as gauges. A run whose
// figures broke an invariant (probe/figures.h) has its figures withheld:
// rail_probe_figures_withheld says which, and no throughput, latency or spread of it is published.
#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "collectors/families.h"
#include "collectors/registry.h"
#include "collectors/striping.h"
#include "rail/health/snapshot_checks.h"
#include "rail/probe/memory_ratio.h"
#include "rail/probe/result_store.h"

namespace rail::collectors {
namespace {

using detail::Labels;

using detail::With;

// The kinds whose buffers may be GPU memory carry the memory type (and their runs what moved
// it); the others move host memory only and keep their labels.
bool TakesMemory(const std::string& kind) {
  const auto parsed = probe::ParseProbeKind(kind);
  return parsed && probe::TakesMemoryType(*parsed);
}

Labels SeriesLabels(const probe::SeriesKey& key) {
  Labels labels = {{"kind", key.kind},
                   {"peer", key.peer},
                   {"rail", key.rail},
                   {"size", std::to_string(key.message_size_bytes)}};
  if (key.streams > 0) labels.push_back({"streams", std::to_string(key.streams)});
  if (TakesMemory(key.kind)) labels.push_back({"memory", key.memory});
  return labels;
}

// A run's figures carry what really moved the bytes (memory_path); the counters do not, so that
// a series' counts stay one series when its path changes.
Labels LastRunLabels(const probe::SeriesState& state) {
  Labels labels = SeriesLabels(state.key);
  if (TakesMemory(state.key.kind)) labels.push_back({"memory_path", state.last.memory_path});
  return labels;
}

// The last run's labels with one of its rails in place of the series' rail: every label that
// tells two series apart (streams, memory) stays, or two series would write the same sample.
Labels RailLabels(const probe::SeriesState& state, const std::string& rail) {
  Labels labels = LastRunLabels(state);
  for (auto& label : labels) {
    if (label.name == "rail") label.value = rail;
  }
  return labels;
}

double Seconds(std::chrono::system_clock::time_point at) {
  return std::chrono::duration<double>(at.time_since_epoch()).count();
}

bool IsUcxKind(const std::string& kind) {
  return kind.rfind("tcp_", 0) != 0;
}

bool Contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

void AddHistogram(prometheus::MetricFamily& family, const Labels& labels,
                  const probe::SeriesState& state, const std::vector<double>& bounds) {
  prometheus::ClientMetric metric;
  metric.label = labels;
  metric.histogram.sample_count = state.rtt_count;
  metric.histogram.sample_sum = state.rtt_sum_seconds;
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    cumulative += state.rtt_bucket_counts[i];
    metric.histogram.bucket.push_back({cumulative, bounds[i]});
  }
  metric.histogram.bucket.push_back({state.rtt_count, std::numeric_limits<double>::infinity()});
  family.metric.push_back(std::move(metric));
}

// The families of every series, in exposition order.
struct SeriesFamilies {
  detail::FamilyBuilder runs = detail::Counter("rail_probe_runs_total", "Probe runs, by series.");
  detail::FamilyBuilder errors =
      detail::Counter("rail_probe_errors_total", "Failed probe runs, by reason.");
  detail::FamilyBuilder last_run =
      detail::Gauge("rail_probe_last_run_timestamp_seconds",
                    "When the series' last run finished, seconds since the epoch.");
  detail::FamilyBuilder success = detail::Gauge(
      "rail_probe_success",
      "1 when the series' last run succeeded (withdrawn after three intervals without a run).");
  detail::FamilyBuilder throughput =
      detail::Gauge("rail_probe_throughput_bytes_per_second",
                    "Payload throughput of the series' last run, bytes per second.");
  detail::FamilyBuilder rail_throughput = detail::Gauge(
      "rail_probe_rail_throughput_bytes_per_second",
      "Each rail's payload throughput during the last multi-rail run, bytes per second.");
  detail::FamilyBuilder moved =
      detail::Gauge("rail_probe_bytes", "Payload bytes moved by the last run.");
  detail::FamilyBuilder duration =
      detail::Gauge("rail_probe_duration_seconds", "Time the last run spent moving data, seconds.");
  detail::FamilyBuilder rtt_stats =
      detail::Gauge("rail_probe_rtt_run_seconds",
                    "Round-trip time (not one-way) of the last run: stat is min, p50, p90, p99, "
                    "p99.9 or max; seconds.");
  detail::FamilyBuilder transport =
      detail::Gauge("rail_probe_transport_info",
                    "A transport and device a UCX endpoint of the last run really used (from its "
                    "lanes); value 1.");
  detail::FamilyBuilder counter_bytes =
      detail::Gauge("rail_probe_rail_transmit_bytes",
                    "Bytes the rail's own counters (port_xmit_data or netdev tx_bytes) counted "
                    "during the run.");
  detail::FamilyBuilder share =
      detail::Gauge("rail_share_ratio",
                    "The rail's share of the bytes its counters counted on all probed rails "
                    "during the last run (0..1).");
  detail::FamilyBuilder other = detail::Gauge("rail_probe_other_rails_transmit_bytes",
                                              "Bytes counted on rails the last run did not use.");
  detail::FamilyBuilder cpu = detail::Gauge(
      "rail_probe_cpu_seconds", "CPU time the last run used, by side (local or peer), seconds.");
  detail::FamilyBuilder withheld = detail::Gauge(
      "rail_probe_figures_withheld",
      "1 for each invariant the series' last run broke (rail_bytes_sum, counter_bytes, line_rate, "
      "rtt_order, interval_spread): its throughput, latency and spread are not published.");
  detail::FamilyBuilder violations =
      detail::Counter("rail_probe_figure_violations_total",
                      "Runs whose figures were withheld, by the invariant they broke.");
  detail::FamilyBuilder rail_bytes =
      detail::Gauge("rail_probe_rail_bytes",
                    "Each rail's payload bytes during the last multirail_capacity run; they sum to "
                    "rail_probe_bytes.");
  detail::FamilyBuilder interval_rate = detail::Gauge(
      "rail_probe_interval_throughput_bytes_per_second",
      "The slowest (stat=min) and fastest (stat=max) of the last bulk run's interval rates "
      "(up to ten equal intervals of eight completions or more), bytes per second.");
  detail::FamilyBuilder cv =
      detail::Gauge("rail_probe_throughput_cv",
                    "Coefficient of variation of the last bulk run's interval rates: above "
                    "figures.max_interval_cv the run was noise, and the checks hold back.");
  prometheus::MetricFamily histogram = [] {
    prometheus::MetricFamily family;
    family.name = "rail_probe_rtt_seconds";
    family.help = "Round-trip times (not one-way) of every ping-pong sample, seconds.";
    family.type = prometheus::MetricType::Histogram;
    return family;
  }();

  void AddCumulative(const probe::SeriesState& state, const probe::ResultStore& store);
  void AddLastRun(const probe::SeriesState& state);
  void AddCounterFigures(const probe::SeriesState& state);
};

// Counters and the histogram: kept while the series exists, current or not.
void SeriesFamilies::AddCumulative(const probe::SeriesState& state,
                                   const probe::ResultStore& store) {
  const Labels series = SeriesLabels(state.key);
  runs.Add(series, static_cast<double>(state.runs));
  for (const auto& [reason, count] : state.errors_by_reason) {
    errors.Add(With(series, "reason", reason), static_cast<double>(count));
  }
  last_run.Add(series, Seconds(state.last.finished_at));
  for (const auto& [invariant, count] : state.withheld_by_invariant) {
    violations.Add(With(series, "invariant", invariant), static_cast<double>(count));
  }
  if (state.rtt_count > 0) AddHistogram(histogram, series, state, store.rtt_buckets());
}

// The gauges of a current run.
void SeriesFamilies::AddLastRun(const probe::SeriesState& state) {
  const Labels series = LastRunLabels(state);
  const auto& result = state.last;
  success.Add(series, result.success ? 1 : 0);
  if (!result.success) return;
  duration.Add(series, result.seconds);
  moved.Add(series, static_cast<double>(result.bytes));
  cpu.Add(With(series, "side", "local"), result.local_cpu_seconds);
  if (result.peer_cpu_seconds) cpu.Add(With(series, "side", "peer"), *result.peer_cpu_seconds);
  AddCounterFigures(state);
  other.Add(series, static_cast<double>(result.bytes_on_other_rails));
  if (!result.withheld.empty()) {
    for (const auto& problem : result.withheld) {
      withheld.Add(With(series, "invariant", problem.invariant), 1);
    }
    return;
  }
  if (probe::IsBulk(*probe::ParseProbeKind(state.key.kind))) {
    throughput.Add(series, result.throughput_bytes_per_second);
  }
  if (result.spread) {
    interval_rate.Add(With(series, "stat", "min"), result.spread->min_bytes_per_second);
    interval_rate.Add(With(series, "stat", "max"), result.spread->max_bytes_per_second);
    cv.Add(series, result.spread->cv);
  }
  if (result.rtt) {
    const std::pair<const char*, double> points[] = {
        {"min", result.rtt->min}, {"p50", result.rtt->p50},    {"p90", result.rtt->p90},
        {"p99", result.rtt->p99}, {"p99.9", result.rtt->p999}, {"max", result.rtt->max}};
    for (const auto& [stat, value] : points) rtt_stats.Add(With(series, "stat", stat), value);
  }
  for (const auto& rail : result.per_rail) {
    rail_throughput.Add(RailLabels(state, rail.rail), rail.bytes_per_second);
    rail_bytes.Add(RailLabels(state, rail.rail), static_cast<double>(rail.bytes));
  }
}

// The lanes UCX really used and the rails' own counters: evidence, published whether or not the
// run's figures were withheld (they say why).
void SeriesFamilies::AddCounterFigures(const probe::SeriesState& state) {
  const auto& result = state.last;
  std::set<std::pair<std::string, std::string>> lanes_seen;
  for (const auto& lane : result.lanes) {
    // Several lanes (am, rma_bw, wireup) can share one transport and device.
    if (!lanes_seen.insert({lane.transport, lane.device}).second) continue;
    Labels labels = RailLabels(state, lane.rail.empty() ? state.key.rail : lane.rail);
    labels.push_back({"transport", lane.transport});
    labels.push_back({"device", lane.device});
    transport.Add(std::move(labels), 1);
  }
  for (const auto& delta : result.counters) {
    // Rails the run did not use are summed in rail_probe_other_rails_transmit_bytes.
    if (!Contains(result.rails, delta.rail)) continue;
    counter_bytes.Add(RailLabels(state, delta.rail), static_cast<double>(delta.transmit_bytes));
    if (result.rails.size() > 1) share.Add(RailLabels(state, delta.rail), delta.share);
  }
}

// The families about rails and peers rather than series.
struct PeerFamilies {
  std::map<std::pair<std::string, std::string>, double> fallback;  // (rail, peer)
  std::map<std::string, std::pair<std::string, std::string>> versions;

  void Observe(const probe::SeriesState& state, bool current);
  void MoveTo(const std::vector<health::CheckResult>& verdicts,
              std::vector<prometheus::MetricFamily>& out) const;
};

void PeerFamilies::Observe(const probe::SeriesState& state, bool current) {
  const auto& result = state.last;
  if (!result.peer_agent_version.empty()) {
    versions[result.peer] = {result.peer_agent_version, result.peer_ucx_version};
  }
  if (!current || !result.success) return;
  if (IsUcxKind(state.key.kind)) {
    for (const auto& rail : result.rails) {
      auto& flag = fallback[{rail, result.peer}];
      flag = std::max(flag, Contains(result.fallback_rails, rail) ? 1.0 : 0.0);
    }
  }
}

void PeerFamilies::MoveTo(const std::vector<health::CheckResult>& verdicts,
                          std::vector<prometheus::MetricFamily>& out) const {
  auto fallback_family =
      detail::Gauge("rail_fallback_tcp",
                    "1 when a UCX probe on a rail that should use RDMA ran over TCP, else 0.");
  for (const auto& [key, value] : fallback) {
    fallback_family.Add({{"rail", key.first}, {"peer", key.second}}, value);
  }
  auto not_striping = detail::Gauge(
      "rail_multirail_not_striping",
      "1 when one rail carried more than health.multirail_max_rail_share of a multi-rail UCX "
      "probe's bytes (the multirail_striping check fails), else 0.");
  auto peer_info =
      detail::Gauge("rail_peer_info", "Agent and UCX versions a peer reported; value 1.");
  auto mismatch = detail::Gauge("rail_peer_version_mismatch",
                                "1 when the peer's agent or UCX version differs from ours.");
  for (const auto& verdict : verdicts) {
    if (verdict.check == "multirail_striping" && !verdict.held_back) {
      not_striping.Add({{"peer", verdict.peer}}, verdict.ok ? 0 : 1);
    }
  }
  for (const auto& [peer, agent_and_ucx] : versions) {
    peer_info.Add({{"peer", peer},
                   {"agent_version", agent_and_ucx.first},
                   {"ucx_version", agent_and_ucx.second}},
                  1);
    if (const auto* verdict = health::FindVerdict(verdicts, "peer_version", "", peer)) {
      mismatch.Add({{"peer", peer}}, verdict->ok ? 0 : 1);
    }
  }
  for (auto* family : {&fallback_family, &not_striping, &peer_info, &mismatch}) {
    family->MoveTo(out);
  }
}

// Each rail's GPU-memory throughput over its host-memory throughput (the same kind, peer and
// size), for the current series of both.
void AddMemoryRatios(const std::vector<probe::SeriesState>& series, const probe::ResultStore& store,
                     const probe::FigureLimits& figures,
                     std::vector<prometheus::MetricFamily>& out) {
  auto ratio = detail::Gauge(
      "rail_probe_memory_throughput_ratio",
      "Throughput of the last run with GPU memory (memory: cuda or cuda_host) divided by the "
      "same probe's with host memory; memory_path says what moved the GPU memory's bytes.");
  for (const auto& entry : probe::MemoryThroughputRatios(
           series, [&](const probe::SeriesState& state) { return store.IsCurrent(state); },
           figures)) {
    ratio.Add({{"kind", entry.kind},
               {"peer", entry.peer},
               {"rail", entry.rail},
               {"size", std::to_string(entry.message_size_bytes)},
               {"memory", gpu::MemoryTypeName(entry.memory)},
               {"memory_path", entry.memory_path}},
              entry.ratio);
  }
  ratio.MoveTo(out);
}

// Runs a peer refused busy: counted here and nowhere else (no run, no error, no verdict).
void AddBusy(const probe::ResultStore& store, std::vector<prometheus::MetricFamily>& out) {
  auto busy = detail::Counter("rail_probe_busy_total",
                              "Probe runs the peer refused busy (it was serving another bulk "
                              "run) and this agent retried; not failures.");
  for (const auto& [key, count] : store.BusyCounts()) {
    busy.Add({{"kind", key.kind}, {"peer", key.peer}, {"rail", key.rail}},
             static_cast<double>(count));
  }
  busy.MoveTo(out);
}

class ProbeCollector final : public Collector {
 public:
  std::string Name() const override { return "probe"; }
  std::string Help() const override {
    return "Results of the scheduled probes and the peers' versions";
  }

  void Collect(Scrape& scrape, std::vector<prometheus::MetricFamily>& out) override {
    const probe::ResultStore* store = scrape.results();
    if (store == nullptr) return;
    const auto& verdicts = scrape.Verdicts();
    SeriesFamilies series;
    PeerFamilies peers;
    for (const auto& state : verdicts.series) {
      series.AddCumulative(state, *store);
      const bool current = store->IsCurrent(state);
      if (current) series.AddLastRun(state);
      peers.Observe(state, current);
    }
    for (auto* family :
         {&series.runs, &series.errors, &series.last_run, &series.success, &series.throughput,
          &series.rail_throughput, &series.rail_bytes, &series.moved, &series.duration,
          &series.rtt_stats, &series.transport, &series.counter_bytes, &series.share, &series.other,
          &series.cpu, &series.interval_rate, &series.cv, &series.withheld, &series.violations}) {
      family->MoveTo(out);
    }
    const auto& figures = scrape.sources().health.figures;
    peers.MoveTo(verdicts.checks, out);
    detail::AddStriping(verdicts.striping, *store, out);
    AddMemoryRatios(verdicts.series, *store, figures, out);
    if (!series.histogram.metric.empty()) out.push_back(std::move(series.histogram));
    AddBusy(*store, out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeProbeCollector() {
  return std::make_unique<ProbeCollector>();
}

}  // namespace rail::collectors
