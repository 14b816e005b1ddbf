// Probe results: success, throughput, round-trip latency, transports, counter shares, CPU. Reads
// the result store only; a scrape never waits for a probe.
#include <algorithm>
#include <map>
#include <set>

#include "collectors/families.h"
#include "collectors/registry.h"
#include "rail/build_info.h"
#include "rail/probe/result_store.h"

namespace rail {
namespace {

using detail::Labels;

Labels SeriesLabels(const probe::SeriesKey& key) {
  Labels labels = {{"kind", key.kind},
                   {"peer", key.peer},
                   {"rail", key.rail},
                   {"size", std::to_string(key.message_size_bytes)}};
  if (key.streams > 0) labels.push_back({"streams", std::to_string(key.streams)});
  return labels;
}

Labels With(Labels labels, const char* name, std::string value) {
  labels.push_back({name, std::move(value)});
  return labels;
}

double Seconds(std::chrono::system_clock::time_point at) {
  return std::chrono::duration<double>(at.time_since_epoch()).count();
}

bool IsUcxKind(const std::string& kind) {
  return kind.rfind("tcp_", 0) != 0;
}

class ProbeCollector final : public Collector {
 public:
  std::string Name() const override { return "probe"; }

  void Collect(ScrapeSnapshot& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    const probe::ResultStore* store = snapshot.sources().results;
    if (store == nullptr) return;
    auto runs = detail::Counter("rail_probe_runs_total", "Probe runs, by series.");
    auto errors = detail::Counter("rail_probe_errors_total", "Failed probe runs, by reason.");
    auto last_run = detail::Gauge("rail_probe_last_run_timestamp_seconds",
                                  "When the series' last run finished, seconds since the epoch.");
    auto success = detail::Gauge("rail_probe_success",
                                 "1 when the series' last run succeeded (withdrawn after three "
                                 "intervals without a run).");
    auto throughput =
        detail::Gauge("rail_probe_throughput_bytes_per_second",
                      "Payload throughput of the series' last run, bytes per second.");
    auto rail_throughput = detail::Gauge(
        "rail_probe_rail_throughput_bytes_per_second",
        "Each rail's payload throughput during the last multi-rail run, bytes per second.");
    auto moved = detail::Gauge("rail_probe_bytes", "Payload bytes moved by the last run.");
    auto duration = detail::Gauge("rail_probe_duration_seconds",
                                  "Time the last run spent moving data, seconds.");
    auto rtt_stats = detail::Gauge("rail_probe_rtt_run_seconds",
                                   "Round-trip time (not one-way) of the last run: stat is min, "
                                   "p50, p90, p99, p99.9 or max; seconds.");
    auto transport = detail::Gauge("rail_probe_transport_info",
                                   "A transport and device a UCX endpoint of the last run really "
                                   "used (from its lanes); value 1.");
    auto counter_bytes = detail::Gauge("rail_probe_rail_transmit_bytes",
                                       "Bytes the rail's own counters (port_xmit_data or netdev "
                                       "tx_bytes) counted during the run.");
    auto share = detail::Gauge("rail_share_ratio",
                               "The rail's share of the bytes its counters counted on all probed "
                               "rails during the last run (0..1).");
    auto other = detail::Gauge("rail_probe_other_rails_transmit_bytes",
                               "Bytes counted on rails the last run did not use.");
    auto cpu = detail::Gauge("rail_probe_cpu_seconds",
                             "CPU time the last run used, by side (local or peer), seconds.");
    std::map<std::pair<std::string, std::string>, double> fallback;  // (rail, peer)
    std::map<std::string, std::pair<std::string, std::string>> peer_versions;
    std::map<std::string, double> capacity, striped, max_share;

    prometheus::MetricFamily histogram;
    histogram.name = "rail_probe_rtt_seconds";
    histogram.help = "Round-trip times (not one-way) of every ping-pong sample, seconds.";
    histogram.type = prometheus::MetricType::Histogram;

    for (const auto& state : store->Snapshot()) {
      const Labels series = SeriesLabels(state.key);
      runs.Add(series, static_cast<double>(state.runs));
      for (const auto& [reason, count] : state.errors_by_reason) {
        errors.Add(With(series, "reason", reason), static_cast<double>(count));
      }
      const auto& result = state.last;
      last_run.Add(series, Seconds(result.finished_at));
      if (state.rtt_count > 0) AddHistogram(histogram, series, state, store->rtt_buckets());
      if (!result.peer_agent_version.empty()) {
        peer_versions[result.peer] = {result.peer_agent_version, result.peer_ucx_version};
      }
      if (!store->IsCurrent(state)) continue;
      success.Add(series, result.success ? 1 : 0);
      if (!result.success) continue;

      duration.Add(series, result.seconds);
      moved.Add(series, static_cast<double>(result.bytes));
      cpu.Add(With(series, "side", "local"), result.local_cpu_seconds);
      if (result.peer_cpu_seconds) cpu.Add(With(series, "side", "peer"), *result.peer_cpu_seconds);
      if (probe::IsBulk(*probe::ParseProbeKind(state.key.kind))) {
        throughput.Add(series, result.throughput_bytes_per_second);
      }
      const std::string size = std::to_string(state.key.message_size_bytes);
      for (const auto& rail : result.per_rail) {
        rail_throughput.Add(
            {{"kind", state.key.kind}, {"peer", result.peer}, {"rail", rail.rail}, {"size", size}},
            rail.bytes_per_second);
      }
      if (result.rtt) {
        const std::pair<const char*, double> points[] = {
            {"min", result.rtt->min}, {"p50", result.rtt->p50},    {"p90", result.rtt->p90},
            {"p99", result.rtt->p99}, {"p99.9", result.rtt->p999}, {"max", result.rtt->max}};
        for (const auto& [stat, value] : points) rtt_stats.Add(With(series, "stat", stat), value);
      }
      std::set<std::pair<std::string, std::string>> lanes_seen;
      for (const auto& lane : result.lanes) {
        // Several lanes (am, rma_bw, wireup) can share one transport and device.
        if (!lanes_seen.insert({lane.transport, lane.device}).second) continue;
        transport.Add({{"kind", state.key.kind},
                       {"peer", result.peer},
                       {"rail", lane.rail.empty() ? state.key.rail : lane.rail},
                       {"size", size},
                       {"transport", lane.transport},
                       {"device", lane.device}},
                      1);
      }
      for (const auto& delta : result.counters) {
        // Rails the run did not use are summed in rail_probe_other_rails_transmit_bytes.
        if (std::find(result.rails.begin(), result.rails.end(), delta.rail) == result.rails.end()) {
          continue;
        }
        const Labels rail = {
            {"kind", state.key.kind}, {"peer", result.peer}, {"rail", delta.rail}, {"size", size}};
        counter_bytes.Add(rail, static_cast<double>(delta.transmit_bytes));
        if (result.rails.size() > 1) share.Add(rail, delta.share);
      }
      other.Add(series, static_cast<double>(result.bytes_on_other_rails));
      if (IsUcxKind(state.key.kind)) {
        for (const auto& rail : result.rails) {
          const bool fell_back =
              std::find(result.fallback_rails.begin(), result.fallback_rails.end(), rail) !=
              result.fallback_rails.end();
          auto& flag = fallback[{rail, result.peer}];
          flag = std::max(flag, fell_back ? 1.0 : 0.0);
        }
      }
      if (state.key.kind == "multirail_capacity")
        capacity[result.peer] = result.throughput_bytes_per_second;
      if (const auto busiest = probe::BusiestProbedRail(result)) {
        striped[result.peer] = result.throughput_bytes_per_second;
        max_share[result.peer] = busiest->share;
      }
    }

    auto fallback_family =
        detail::Gauge("rail_fallback_tcp",
                      "1 when a UCX probe on a rail that should use RDMA ran over TCP, else 0.");
    for (const auto& [key, value] : fallback) {
      fallback_family.Add({{"rail", key.first}, {"peer", key.second}}, value);
    }
    auto efficiency = detail::Gauge(
        "rail_multirail_striping_efficiency",
        "UCX's striped throughput over all rails divided by the rails' capacity driven in "
        "parallel (ucx_multirail_throughput / multirail_capacity).");
    for (const auto& [peer, value] : striped) {
      if (const auto cap = capacity.find(peer); cap != capacity.end() && cap->second > 0) {
        efficiency.Add({{"peer", peer}}, value / cap->second);
      }
    }
    auto not_striping = detail::Gauge(
        "rail_multirail_not_striping",
        "1 when one rail carried more than health.multirail_max_rail_share (default 0.8) of a "
        "multi-rail UCX probe's bytes, else 0.");
    const double max_rail_share = snapshot.sources().config
                                      ? snapshot.sources().config->health.multirail_max_rail_share
                                      : probe::kDefaultMaxRailShare;
    for (const auto& [peer, highest] : max_share) {
      not_striping.Add({{"peer", peer}}, highest > max_rail_share ? 1 : 0);
    }
    const auto& ours = GetBuildInfo();
    auto peer_info =
        detail::Gauge("rail_peer_info", "Agent and UCX versions a peer reported; value 1.");
    auto mismatch = detail::Gauge("rail_peer_version_mismatch",
                                  "1 when the peer's agent or UCX version differs from ours.");
    for (const auto& [peer, versions] : peer_versions) {
      peer_info.Add(
          {{"peer", peer}, {"agent_version", versions.first}, {"ucx_version", versions.second}}, 1);
      mismatch.Add({{"peer", peer}},
                   versions.first != ours.version || versions.second != ours.ucx_version ? 1 : 0);
    }

    for (auto* family : {&runs, &errors, &last_run, &success, &throughput, &rail_throughput, &moved,
                         &duration, &rtt_stats, &transport, &counter_bytes, &share, &other, &cpu,
                         &fallback_family, &efficiency, &not_striping, &peer_info, &mismatch}) {
      family->MoveTo(out);
    }
    if (!histogram.metric.empty()) out.push_back(std::move(histogram));
  }

 private:
  static void AddHistogram(prometheus::MetricFamily& family, const Labels& labels,
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
};

}  // namespace

std::unique_ptr<Collector> MakeProbeCollector() {
  return std::make_unique<ProbeCollector>();
}

}  // namespace rail
