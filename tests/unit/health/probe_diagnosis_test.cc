// The diagnosis of a failing probe_throughput from the fabric evidence of the failing run itself
// (its rail's counters read at the run's start and end): a pause share, discards, the link going
// down; the counters read and within limits; the counters unread (no false "no evidence").
#include <gmock/gmock.h>

#include "health_fixture.h"

namespace rail::health::test {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

// rail1's run over 2.5 s, its NIC (mlx5 names) counting `rises`, its sysfs counters `counters`.
probe::RailFabricEvidence Evidence(const std::map<std::string, std::uint64_t>& rises,
                                   std::map<std::string, std::uint64_t> counters = {}) {
  nic::EthtoolStatistics statistics;
  for (const auto& [name, value] : rises) {
    statistics.names.push_back(name);
    statistics.values.push_back(value);
  }
  probe::RailFabricEvidence evidence;
  evidence.rail = "rail1";
  evidence.seconds = 2.5;
  if (!rises.empty()) {
    nic::FabricReading reading;
    reading.netdev = "ra1";
    reading.driver = "mlx5_core";
    reading.statistics = rises.size();
    reading.known_driver = true;
    reading.samples = nic::MapFabricCounters("mlx5_core", statistics);
    evidence.nic.push_back(reading);
  }
  evidence.counters = std::move(counters);
  return evidence;
}

// rail0 at 6 Gbit/s and rail1 at 1 Gbit/s (failing against its sibling), rail1's run with
// `evidence` (none when nullopt); rail1's probe_throughput verdict.
CheckResult SlowRail(std::optional<probe::RailFabricEvidence> evidence,
                     HostConfig config = LabConfig()) {
  Host host("spark-dual-rail", std::move(config));
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 6 * kGbit);
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail1"}, 1 * kGbit);
  if (evidence) host.series.back().last.fabric = {*evidence};
  const auto results = host.Evaluate();
  EXPECT_TRUE(Find(results, "probe_throughput", "rail0", "b")->ok);
  return *Find(results, "probe_throughput", "rail1", "b");
}

const std::map<std::string, std::uint64_t> kFlat = {{"rx_prio3_pause_duration", 0},
                                                    {"tx_prio3_pause_duration", 0},
                                                    {"rx_discards_phy", 0},
                                                    {"link_down_events_phy", 0},
                                                    {"rx_pcs_symbol_err_phy", 0}};

std::map<std::string, std::uint64_t> FlatBut(const std::string& name, std::uint64_t rise) {
  auto rises = kFlat;
  rises[name] = rise;
  return rises;
}

TEST(ProbeDiagnosisTest, PauseShareOfTheRunNamesPriorityDirectionAndCounter) {
  // 950 ms of 2.5 s: 38%, above health.pfc_pause_max_fraction (10%).
  const auto verdict = SlowRail(Evidence(FlatBut("rx_prio3_pause_duration", 950'000)));
  EXPECT_FALSE(verdict.ok);
  EXPECT_THAT(verdict.reason, HasSubstr("below 50% of its sibling rails' median"));
  EXPECT_THAT(verdict.reason,
              EndsWith("; during the run: ra1 transmitter paused by its switch 38% of the run on "
                       "priority 3 (rx_prio3_pause_duration; above 10%)"));

  const auto pausing = SlowRail(Evidence(FlatBut("tx_prio3_pause_duration", 500'000)));
  EXPECT_THAT(pausing.reason, HasSubstr("ra1 paused its switch 20% of the run on priority 3 "
                                        "(tx_prio3_pause_duration; above 10%)"));
}

TEST(ProbeDiagnosisTest, PauseIsJudgedByThePfcPauseThreshold) {
  HostConfig config = LabConfig();
  config.health.pfc_pause_max_fraction = 0.5;  // 38% is within it now
  const auto verdict = SlowRail(Evidence(FlatBut("rx_prio3_pause_duration", 950'000)), config);
  EXPECT_THAT(verdict.reason, Not(HasSubstr("transmitter paused")));
  EXPECT_THAT(verdict.reason, HasSubstr("no congestion or link evidence during the run"));
}

TEST(ProbeDiagnosisTest, DiscardsDropsAndStormsOfTheRun) {
  EXPECT_THAT(SlowRail(Evidence(FlatBut("rx_discards_phy", 120))).reason,
              HasSubstr("during the run: ra1 rx_discards_phy rose by 120 in the run"));
  EXPECT_THAT(
      SlowRail(Evidence(kFlat, {{"hw_counters/out_of_sequence", 5}})).reason,
      HasSubstr(
          "during the run: the RDMA port out_of_sequence rose by 5 in the run (loss: the responder "
          "received a packet out of sequence)"));
  auto storm = FlatBut("tx_pause_storm_error_events", 1);
  storm["tx_pause_storm_warning_events"] = 4;
  EXPECT_THAT(SlowRail(Evidence(storm)).reason,
              HasSubstr("ra1 tx_pause_storm_error_events rose by 1 in the run "
                        "(tx_pause_storm_warning_events by 4)"));
}

TEST(ProbeDiagnosisTest, LinkDownAndPostFecErrorsOfTheRun) {
  const auto both = SlowRail(Evidence(FlatBut("link_down_events_phy", 2)));
  EXPECT_THAT(both.reason,
              HasSubstr("link went down 2 time(s) in the run (ra1 link_down_events_phy)"));
  // Without the NIC's own count, the netdev's carrier_down_count.
  EXPECT_THAT(SlowRail(Evidence({}, {{"carrier_down_count", 1}})).reason,
              HasSubstr("link went down 1 time(s) in the run (ra1 carrier_down_count)"));
  EXPECT_THAT(SlowRail(Evidence(FlatBut("rx_pcs_symbol_err_phy", 7))).reason,
              HasSubstr("ra1 rx_pcs_symbol_err_phy rose by 7 in the run (frames lost on the "
                        "link)"));
}

TEST(ProbeDiagnosisTest, CountersReadAndFlatSayThereWasNone) {
  const auto verdict = SlowRail(Evidence(kFlat, {{"carrier_down_count", 0}}));
  EXPECT_FALSE(verdict.ok) << "the rail is still slow";
  EXPECT_THAT(verdict.reason,
              EndsWith("; no congestion or link evidence during the run (pause, port discards, "
                       "link-down, link errors counters within limits)"));
  // A pause share within the limit is no evidence either.
  EXPECT_THAT(SlowRail(Evidence(FlatBut("rx_prio3_pause_duration", 100'000))).reason,
              HasSubstr("no congestion or link evidence during the run"));
}

TEST(ProbeDiagnosisTest, UnreadCountersAreNotACleanBill) {
  for (const auto& evidence :
       {std::optional<probe::RailFabricEvidence>(), std::optional(Evidence({}))}) {
    const auto verdict = SlowRail(evidence);
    EXPECT_THAT(verdict.reason,
                EndsWith("; the run's fabric counters could not be read, so congestion and link "
                         "faults are not ruled out"));
    EXPECT_THAT(verdict.reason, Not(HasSubstr("no congestion or link evidence")));
  }
  // Counters read that no rule reads (a driver's statistics without allow-listed faults).
  EXPECT_THAT(SlowRail(Evidence({}, {{"hw_counters/np_cnp_sent", 4}})).reason,
              HasSubstr("no counter read during the run can show congestion or link faults"));
}

TEST(ProbeDiagnosisTest, ARailThatPassesGetsNoDiagnosis) {
  Host host("spark-dual-rail", LabConfig());
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail0"}, 6 * kGbit);
  host.AddResult(probe::ProbeKind::kUcxThroughput, {"rail1"}, 5 * kGbit);
  auto evidence = Evidence(FlatBut("link_down_events_phy", 3));
  host.series.back().last.fabric = {evidence};
  const auto verdict = Find(host.Evaluate(), "probe_throughput", "rail1", "b");
  EXPECT_TRUE(verdict->ok);
  EXPECT_EQ(verdict->reason, "") << "the link_flaps check, not probe_throughput, judges the link";
}

}  // namespace
}  // namespace rail::health::test
