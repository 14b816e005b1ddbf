#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "rail/base/build_info.h"
#include "rail/collectors/collector_set.h"
#include "rail/probe/result_store.h"
#include "rail/sysfs/filesystem.h"
#include "support/fake_clock.h"
#include "support/scrape.h"

namespace rail::collectors {
namespace {

using std::chrono::minutes;
using test::Sample;
using test::SampleCount;

class ProbeCollectorTest : public ::testing::Test {
 protected:
  ProbeCollectorTest() : sys_(std::string(RAIL_FIXTURES) + "/spark-dual-rail/sys"), store_(clock_) {
    sources_.inventory.sys = &sys_;
    sources_.inventory.proc = &sys_;
    sources_.health.results = &store_;
    sources_.health.own_agent_version = base::GetBuildInfo().version;
    sources_.health.own_ucx_version = "1.13.1";  // as the probe worker reports it
    set_ = std::make_unique<CollectorSet>(sources_, std::vector<std::string>{"probe"});
  }

  probe::ProbeResult Result(probe::ProbeKind kind, std::vector<std::string> rails) {
    probe::ProbeResult result;
    result.kind = kind;
    result.peer = "b";
    result.rails = std::move(rails);
    result.success = true;
    result.finished_at = clock_.WallNow();
    result.message_size_bytes = 1 << 20;
    result.seconds = 2;
    result.bytes = 2'000'000'000;
    result.throughput_bytes_per_second = 1e9;
    result.peer_agent_version = "0.1.0";
    result.peer_ucx_version = "1.13.1";
    return result;
  }

  test::FakeClock clock_;
  sysfs::RootedFilesystem sys_;
  probe::ResultStore store_;
  Sources sources_;
  std::unique_ptr<CollectorSet> set_;
};

TEST_F(ProbeCollectorTest, ThroughputTransportAndFallback) {
  auto result = Result(probe::ProbeKind::kUcxThroughput, {"rail0"});
  result.lanes = {{"tcp", "enp1s0f0np0", "rail0"}};
  result.fallback_rails = {"rail0"};
  store_.Record(result, minutes(5));
  const auto families = set_->Collect();
  const test::LabelMap series = {
      {"kind", "ucx_throughput"}, {"peer", "b"}, {"rail", "rail0"}, {"size", "1048576"}};
  EXPECT_EQ(Sample(families, "rail_probe_success", series), 1);
  EXPECT_EQ(Sample(families, "rail_probe_throughput_bytes_per_second", series), 1e9);
  EXPECT_EQ(Sample(families, "rail_probe_transport_info",
                   {{"rail", "rail0"}, {"transport", "tcp"}, {"device", "enp1s0f0np0"}}),
            1);
  EXPECT_EQ(Sample(families, "rail_fallback_tcp", {{"rail", "rail0"}, {"peer", "b"}}), 1);
  EXPECT_EQ(Sample(families, "rail_peer_info", {{"peer", "b"}, {"ucx_version", "1.13.1"}}), 1);
}

TEST_F(ProbeCollectorTest, HostAndCudaRunsAreTwoSeriesWithTheirRatio) {
  store_.Record(Result(probe::ProbeKind::kUcxThroughput, {"rail0"}), minutes(5));
  auto cuda = Result(probe::ProbeKind::kUcxThroughput, {"rail0"});
  cuda.memory = gpu::MemoryType::kCuda;
  cuda.memory_path = "staged";
  cuda.throughput_bytes_per_second = 0.25e9;
  store_.Record(cuda, minutes(5));
  const auto families = set_->Collect();
  EXPECT_EQ(SampleCount(families, "rail_probe_throughput_bytes_per_second"), 2u);
  EXPECT_EQ(Sample(families, "rail_probe_throughput_bytes_per_second",
                   {{"memory", "host"}, {"memory_path", "host"}}),
            1e9);
  EXPECT_EQ(Sample(families, "rail_probe_throughput_bytes_per_second",
                   {{"memory", "cuda"}, {"memory_path", "staged"}}),
            0.25e9);
  EXPECT_EQ(Sample(families, "rail_probe_runs_total", {{"memory", "cuda"}}), 1);
  EXPECT_EQ(Sample(families, "rail_probe_memory_throughput_ratio",
                   {{"kind", "ucx_throughput"},
                    {"peer", "b"},
                    {"rail", "rail0"},
                    {"memory", "cuda"},
                    {"memory_path", "staged"}}),
            0.25);
  // The host run alone is judged by probe_throughput; the latency kinds carry no memory label.
  store_.Record(Result(probe::ProbeKind::kTcpRtt, {"rail0"}), minutes(5));
  EXPECT_EQ(SampleCount(set_->Collect(), "rail_probe_memory_throughput_ratio"), 1u);
}

TEST_F(ProbeCollectorTest, NoRatioWithoutAHostRunOfTheSameSeries) {
  auto cuda = Result(probe::ProbeKind::kUcxThroughput, {"rail0"});
  cuda.memory = gpu::MemoryType::kCuda;
  cuda.memory_path = "staged";
  store_.Record(cuda, minutes(5));
  store_.Record(Result(probe::ProbeKind::kUcxThroughput, {"rail1"}), minutes(5));
  EXPECT_EQ(SampleCount(set_->Collect(), "rail_probe_memory_throughput_ratio"), 0u);
}

TEST_F(ProbeCollectorTest, StaleResultIsWithdrawnButCountersStay) {
  store_.Record(Result(probe::ProbeKind::kTcpThroughput, {"rail0"}), minutes(1));
  clock_.Advance(minutes(2));
  EXPECT_EQ(SampleCount(set_->Collect(), "rail_probe_success"), 1u);
  clock_.Advance(minutes(2));  // four intervals after the run
  const auto families = set_->Collect();
  EXPECT_EQ(SampleCount(families, "rail_probe_success"), 0u);
  EXPECT_EQ(SampleCount(families, "rail_probe_throughput_bytes_per_second"), 0u);
  EXPECT_EQ(Sample(families, "rail_probe_runs_total", {{"kind", "tcp_throughput"}}), 1);
}

TEST_F(ProbeCollectorTest, OneAndFourTcpStreamsAreTwoSeries) {
  auto one = Result(probe::ProbeKind::kTcpThroughput, {"rail0"});
  one.streams = 1;
  one.throughput_bytes_per_second = 3e9;
  auto four = one;
  four.streams = 4;
  four.throughput_bytes_per_second = 9e9;
  store_.Record(one, minutes(5));
  store_.Record(four, minutes(5));
  store_.Record(Result(probe::ProbeKind::kUcxThroughput, {"rail0"}), minutes(5));
  const auto families = set_->Collect();
  EXPECT_EQ(SampleCount(families, "rail_probe_throughput_bytes_per_second"), 3u);
  EXPECT_EQ(Sample(families, "rail_probe_throughput_bytes_per_second",
                   {{"kind", "tcp_throughput"}, {"streams", "1"}}),
            3e9);
  EXPECT_EQ(Sample(families, "rail_probe_throughput_bytes_per_second",
                   {{"kind", "tcp_throughput"}, {"streams", "4"}}),
            9e9);
  // Kinds without streams carry no streams label at all.
  for (const auto& family : families) {
    if (family.name != "rail_probe_throughput_bytes_per_second") continue;
    for (const auto& metric : family.metric) {
      bool tcp = false, has_streams = false;
      for (const auto& label : metric.label) {
        tcp = tcp || (label.name == "kind" && label.value == "tcp_throughput");
        has_streams = has_streams || label.name == "streams";
      }
      EXPECT_EQ(tcp, has_streams);
    }
  }
}

// Every per-rail family of a series carries the series' labels: two tcp_throughput jobs that differ
// only in their stream count stay two series in each of them, not one duplicated.
TEST_F(ProbeCollectorTest, PerRailFamiliesKeepTheStreamsLabel) {
  auto one = Result(probe::ProbeKind::kTcpThroughput, {"rail0", "rail1"});
  one.streams = 1;
  one.counters = {{"rail0", 600, 0, 0.6}, {"rail1", 400, 0, 0.4}};
  one.per_rail = {{"rail0", 6e8, 600}, {"rail1", 4e8, 400}};
  auto four = one;
  four.streams = 4;
  four.counters = {{"rail0", 900, 0, 0.9}, {"rail1", 100, 0, 0.1}};
  four.per_rail = {{"rail0", 9e8, 900}, {"rail1", 1e8, 100}};
  store_.Record(one, minutes(5));
  store_.Record(four, minutes(5));
  const auto families = set_->Collect();
  for (const char* name : {"rail_probe_rail_transmit_bytes", "rail_share_ratio",
                           "rail_probe_rail_throughput_bytes_per_second"}) {
    EXPECT_EQ(SampleCount(families, name), 4u) << name;
  }
  EXPECT_EQ(
      Sample(families, "rail_probe_rail_transmit_bytes", {{"rail", "rail0"}, {"streams", "1"}}),
      600);
  EXPECT_EQ(
      Sample(families, "rail_probe_rail_transmit_bytes", {{"rail", "rail0"}, {"streams", "4"}}),
      900);
  EXPECT_EQ(Sample(families, "rail_share_ratio", {{"rail", "rail1"}, {"streams", "4"}}), 0.1);
  // No family holds two samples with the same labels.
  for (const auto& family : families) {
    std::set<std::vector<std::pair<std::string, std::string>>> seen;
    for (const auto& metric : family.metric) {
      std::vector<std::pair<std::string, std::string>> labels;
      for (const auto& label : metric.label) labels.emplace_back(label.name, label.value);
      std::sort(labels.begin(), labels.end());
      EXPECT_TRUE(seen.insert(labels).second) << "duplicate series in " << family.name;
    }
  }
}

TEST_F(ProbeCollectorTest, FailuresCountedByReason) {
  auto failed = Result(probe::ProbeKind::kUcxRtt, {"rail1"});
  failed.success = false;
  failed.error_reason = "timeout";
  store_.Record(failed, minutes(5));
  store_.Record(failed, minutes(5));
  failed.error_reason = "refused";
  store_.Record(failed, minutes(5));
  const auto families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_probe_errors_total", {{"reason", "timeout"}}), 2);
  EXPECT_EQ(Sample(families, "rail_probe_errors_total", {{"reason", "refused"}}), 1);
  EXPECT_EQ(Sample(families, "rail_probe_success", {{"kind", "ucx_rtt"}}), 0);
  EXPECT_EQ(SampleCount(families, "rail_probe_rtt_run_seconds"), 0u);
}

TEST_F(ProbeCollectorTest, BusyIsCountedApartAndIsNoFailedRun) {
  store_.Record(Result(probe::ProbeKind::kTcpThroughput, {"rail0"}), minutes(1));
  auto busy = Result(probe::ProbeKind::kTcpThroughput, {"rail0"});
  busy.success = false;
  busy.error_reason = probe::kBusyReason;
  busy.retry_after = std::chrono::milliseconds(1500);
  ASSERT_TRUE(probe::IsBusy(busy));
  store_.RecordBusy(busy);
  store_.RecordBusy(busy);
  const auto families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_probe_busy_total",
                   {{"kind", "tcp_throughput"}, {"peer", "b"}, {"rail", "rail0"}}),
            2);
  // The series still reads as its last real run: a success, one run, no error.
  EXPECT_EQ(Sample(families, "rail_probe_success", {{"kind", "tcp_throughput"}}), 1);
  EXPECT_EQ(Sample(families, "rail_probe_runs_total", {{"kind", "tcp_throughput"}}), 1);
  EXPECT_EQ(SampleCount(families, "rail_probe_errors_total"), 0u);
}

TEST_F(ProbeCollectorTest, RttHistogramAndQuantiles) {
  auto result = Result(probe::ProbeKind::kUcxRtt, {"rail0"});
  result.message_size_bytes = 8;
  result.rtt_samples_seconds = {10e-6, 12e-6, 11e-6, 50e-6};
  result.rtt = probe::Summarise(result.rtt_samples_seconds);
  store_.Record(result, minutes(5));
  store_.Record(result, minutes(5));
  const auto states = store_.Snapshot();
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].last.rtt_samples_seconds.capacity(), 0u)
      << "the store keeps counts and a summary, not the samples or their memory";
  const auto families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_probe_rtt_run_seconds", {{"stat", "min"}}), 10e-6);
  EXPECT_EQ(Sample(families, "rail_probe_rtt_run_seconds", {{"stat", "max"}}), 50e-6);
  EXPECT_EQ(SampleCount(families, "rail_probe_throughput_bytes_per_second"), 0u)
      << "a latency probe has no throughput";
  const auto text = test::Serialize(families);
  EXPECT_NE(text.find("rail_probe_rtt_seconds_count{kind=\"ucx_rtt\",peer=\"b\",rail=\"rail0\","
                      "size=\"8\"} 8"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rail_probe_rtt_seconds_bucket{kind=\"ucx_rtt\",peer=\"b\",rail=\"rail0\","
                      "size=\"8\",le=\"+Inf\"} 8"),
            std::string::npos);
}

TEST_F(ProbeCollectorTest, StripingSignals) {
  auto capacity = Result(probe::ProbeKind::kMultirailCapacity, {"rail0", "rail1"});
  capacity.throughput_bytes_per_second = 2e9;
  store_.Record(capacity, minutes(5));
  auto striped = Result(probe::ProbeKind::kUcxMultirailThroughput, {"rail0", "rail1"});
  striped.throughput_bytes_per_second = 1.5e9;
  striped.counters = {{"rail0", 900, 0, 0.9}, {"rail1", 100, 0, 0.1}};
  store_.Record(striped, minutes(5));
  const auto families = set_->Collect();
  EXPECT_DOUBLE_EQ(*Sample(families, "rail_multirail_striping_efficiency", {{"peer", "b"}}), 0.75);
  EXPECT_EQ(Sample(families, "rail_multirail_not_striping", {{"peer", "b"}}), 1);
  EXPECT_EQ(Sample(families, "rail_share_ratio",
                   {{"kind", "ucx_multirail_throughput"}, {"rail", "rail0"}}),
            0.9);
}

TEST_F(ProbeCollectorTest, CountersOfRailsTheRunDidNotUseAreNotSeriesOfTheirOwn) {
  // Two single-rail series that both saw bytes on the other rail must not produce the same
  // series twice (a scrape with duplicate series is rejected whole).
  for (const std::string rail : {"rail0", "rail1"}) {
    auto result = Result(probe::ProbeKind::kTcpRtt, {rail});
    result.counters = {{"rail0", 100, 0, 0}, {"rail1", 200, 0, 0}};
    result.bytes_on_other_rails = 7;
    store_.Record(result, minutes(5));
  }
  const auto families = set_->Collect();
  EXPECT_EQ(SampleCount(families, "rail_probe_rail_transmit_bytes"), 2u);
  EXPECT_EQ(Sample(families, "rail_probe_rail_transmit_bytes", {{"rail", "rail1"}}), 200);
  EXPECT_EQ(Sample(families, "rail_probe_other_rails_transmit_bytes", {{"rail", "rail0"}}), 7);
}

TEST_F(ProbeCollectorTest, ARunWhoseFiguresBrokeAnInvariantPublishesWhichNotItsFigures) {
  auto result = Result(probe::ProbeKind::kMultirailCapacity, {"rail0", "rail1"});
  result.per_rail = {{"rail0", 5e8, 1'000'000'000}, {"rail1", 5e8, 900'000'000}};
  result.spread = probe::RateSpread{10, 0.8e9, 1.2e9, 1e9, 0.1};
  result.withheld = {{"rail_bytes_sum", "the rails' bytes sum to 1900000000"}};
  store_.Record(result, minutes(5));
  const auto families = set_->Collect();
  const test::LabelMap series = {{"kind", "multirail_capacity"}, {"rail", "rail0+rail1"}};
  EXPECT_EQ(Sample(families, "rail_probe_figures_withheld",
                   {{"kind", "multirail_capacity"}, {"invariant", "rail_bytes_sum"}}),
            1);
  EXPECT_EQ(Sample(families, "rail_probe_figure_violations_total",
                   {{"kind", "multirail_capacity"}, {"invariant", "rail_bytes_sum"}}),
            1);
  EXPECT_EQ(Sample(families, "rail_probe_success", series), 1);
  for (const char* family :
       {"rail_probe_throughput_bytes_per_second", "rail_probe_rail_throughput_bytes_per_second",
        "rail_probe_rail_bytes", "rail_probe_interval_throughput_bytes_per_second",
        "rail_probe_throughput_cv"}) {
    EXPECT_EQ(SampleCount(families, family), 0u) << family;
  }
  EXPECT_FALSE(Sample(families, "rail_multirail_striping_efficiency", {{"peer", "b"}}));
}

TEST_F(ProbeCollectorTest, ABulkRunPublishesItsSpreadAndEachRailsBytes) {
  auto result = Result(probe::ProbeKind::kMultirailCapacity, {"rail0", "rail1"});
  result.per_rail = {{"rail0", 6e8, 1'200'000'000}, {"rail1", 4e8, 800'000'000}};
  result.spread = probe::RateSpread{10, 0.8e9, 1.2e9, 1e9, 0.1};
  store_.Record(result, minutes(5));
  const auto families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_probe_interval_throughput_bytes_per_second", {{"stat", "min"}}),
            0.8e9);
  EXPECT_EQ(Sample(families, "rail_probe_interval_throughput_bytes_per_second", {{"stat", "max"}}),
            1.2e9);
  EXPECT_EQ(Sample(families, "rail_probe_throughput_cv", {{"kind", "multirail_capacity"}}), 0.1);
  EXPECT_EQ(Sample(families, "rail_probe_rail_bytes", {{"rail", "rail0"}}), 1.2e9);
  EXPECT_EQ(Sample(families, "rail_probe_rail_bytes", {{"rail", "rail1"}}), 0.8e9);
  EXPECT_EQ(SampleCount(families, "rail_probe_figures_withheld"), 0u);
}

TEST_F(ProbeCollectorTest, AnEfficiencyAboveCapacityIsWithheldWithItsReason) {
  auto capacity = Result(probe::ProbeKind::kMultirailCapacity, {"rail0", "rail1"});
  capacity.throughput_bytes_per_second = 1e9;
  store_.Record(capacity, minutes(5));
  auto striped = Result(probe::ProbeKind::kUcxMultirailThroughput, {"rail0", "rail1"});
  striped.throughput_bytes_per_second = 1.98e9;
  store_.Record(striped, minutes(5));
  auto families = set_->Collect();
  EXPECT_FALSE(Sample(families, "rail_multirail_striping_efficiency", {{"peer", "b"}}));
  EXPECT_EQ(Sample(families, "rail_multirail_striping_efficiency_withheld",
                   {{"peer", "b"}, {"reason", "above_capacity"}}),
            1);
  // The runner asked for the capacity again: counted, and awaited.
  ASSERT_TRUE(store_.RequestRemeasure(store_.Snapshot()[0].key));
  families = set_->Collect();
  EXPECT_EQ(Sample(families, "rail_multirail_capacity_remeasures_total", {{"peer", "b"}}), 1);
  EXPECT_EQ(Sample(families, "rail_multirail_striping_efficiency_withheld",
                   {{"peer", "b"}, {"reason", "awaiting_capacity"}}),
            1);
  capacity.throughput_bytes_per_second = 2.2e9;
  store_.Record(capacity, minutes(5));
  families = set_->Collect();
  EXPECT_DOUBLE_EQ(*Sample(families, "rail_multirail_striping_efficiency", {{"peer", "b"}}), 0.9);
  EXPECT_EQ(SampleCount(families, "rail_multirail_striping_efficiency_withheld"), 0u);
}

}  // namespace
}  // namespace rail::collectors
