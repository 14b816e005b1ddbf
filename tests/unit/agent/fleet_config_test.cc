// The fleet section of the configuration and the probe jobs the plan's pairs become.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rail/agent/config.h"
#include "rail/agent/probing.h"

namespace rail::agent {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(const std::string& yaml) {
  try {
    ParseConfig(yaml, "test.yaml");
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

constexpr const char* kFleet = R"(
fleet:
  self: "10.0.0.1:9841"
  peers_per_rail: 2
  seed: 7
  epoch: 2h
  max_probe_series: 100
  discovery:
    static: ["10.0.0.1:9841", "10.0.0.2:9841"]
    file_sd:
      - files: [/etc/rail_exporter/peers.json]
        refresh_interval: 10s
    dns:
      - names: [agents.example]
        type: SRV
        server: "127.0.0.1:5353"
        timeout: 1s
    kubernetes:
      - service: rail-exporter
        namespace: monitoring
probes:
  - kind: ucx_rtt
  - kind: ucx_multirail_throughput
)";

TEST(FleetConfigTest, ParsesEverySource) {
  const auto config = ParseConfig(kFleet, "test.yaml");
  ASSERT_TRUE(config.fleet);
  const auto& fleet = *config.fleet;
  EXPECT_EQ(*fleet.self, "10.0.0.1:9841");
  EXPECT_EQ(fleet.peers_per_rail, 2u);
  EXPECT_EQ(fleet.seed, 7u);
  EXPECT_EQ(fleet.epoch, std::chrono::hours(2));
  EXPECT_EQ(fleet.max_probe_series, 100u);
  ASSERT_EQ(fleet.static_targets.size(), 2u);
  EXPECT_EQ(fleet.static_targets[1].address, "10.0.0.2:9841");
  ASSERT_EQ(fleet.file_sd.size(), 1u);
  EXPECT_EQ(fleet.file_sd[0].refresh_interval, std::chrono::seconds(10));
  ASSERT_EQ(fleet.dns.size(), 1u);
  EXPECT_EQ(fleet.dns[0].type, fleet::DnsRecordType::kSrv);
  EXPECT_EQ(fleet.dns[0].server, "127.0.0.1:5353");
  EXPECT_EQ(fleet.dns[0].timeout, std::chrono::seconds(1));
  ASSERT_EQ(fleet.kubernetes.size(), 1u);
  EXPECT_EQ(fleet.kubernetes[0].namespace_, "monitoring");
  // Probes naming no peers need no peers[] section with a fleet.
  EXPECT_EQ(config.probes.size(), 2u);
}

TEST(FleetConfigTest, DefaultsAreTheFleetLayers) {
  const auto config = ParseConfig("fleet: {discovery: {static: ['a:1']}}", "test.yaml");
  ASSERT_TRUE(config.fleet);
  EXPECT_EQ(config.fleet->peers_per_rail, fleet::kDefaultPeersPerRail);
  EXPECT_EQ(config.fleet->epoch, fleet::kDefaultEpochLength);
  EXPECT_FALSE(config.fleet->self);
}

TEST(FleetConfigTest, ErrorsNameTheKey) {
  EXPECT_THAT(ErrorOf("fleet: {}"), HasSubstr("fleet.discovery: missing"));
  EXPECT_THAT(ErrorOf("fleet: {discovery: {}}"), HasSubstr("needs at least one source"));
  EXPECT_THAT(ErrorOf("fleet: {discovery: {static: ['nohost']}}"),
              HasSubstr("fleet.discovery.static[0]: needs a port"));
  EXPECT_THAT(ErrorOf("fleet: {discovery: {dns: [{names: [a], type: MX}]}}"),
              HasSubstr("fleet.discovery.dns[0].type: expected A, AAAA or SRV"));
  EXPECT_THAT(ErrorOf("fleet: {discovery: {file_sd: [{files: []}]}}"),
              HasSubstr("fleet.discovery.file_sd[0].files: needs at least one file"));
  EXPECT_THAT(ErrorOf("fleet: {discovery: {kubernetes: [{namespace: x}]}}"),
              HasSubstr("fleet.discovery.kubernetes[0].service: missing"));
  EXPECT_THAT(ErrorOf("fleet: {epoch: 10s, discovery: {static: ['a:1']}}"),
              HasSubstr("fleet.epoch: must be at least 1m"));
  EXPECT_THAT(ErrorOf("fleet: {peers_per_rail: 0, discovery: {static: ['a:1']}}"),
              HasSubstr("fleet.peers_per_rail"));
  EXPECT_THAT(ErrorOf("fleet: {bogus: 1, discovery: {static: ['a:1']}}"),
              HasSubstr("fleet.bogus: unknown key"));
  // Without a fleet, a probe still needs peers.
  EXPECT_THAT(ErrorOf("probes: [{kind: ucx_rtt}]"), HasSubstr("needs at least one entry"));
}

std::vector<probe::ProbeRail> Rails() {
  std::vector<probe::ProbeRail> rails(2);
  rails[0].name = "rail0";
  rails[1].name = "rail1";
  return rails;
}

TEST(FleetConfigTest, PairsBecomeJobsPerKindAndRail) {
  auto config = ParseConfig(std::string(kFleet) + R"(
peers: [{name: static-b, address: "10.9.9.9:9841"}]
)",
                            "test.yaml");
  config.probes.push_back(config.probes[0]);
  config.probes.back().peers = {"static-b"};
  const std::vector<fleet::PlannedPair> pairs = {
      {"10.0.0.2:9841", "rail0"}, {"10.0.0.3:9841", "rail0"}, {"10.0.0.2:9841", "rail1"}};
  const auto fleet_jobs = PlanFleetProbes(config, Rails(), pairs);
  // ucx_rtt: one job per pair; the multi-rail kind: one per planned peer of rail0, over both.
  ASSERT_EQ(fleet_jobs.size(), 5u);
  EXPECT_EQ(fleet_jobs[0].job.peer, "10.0.0.2:9841");
  EXPECT_EQ(fleet_jobs[0].params.peer, "10.0.0.2:9841");
  EXPECT_EQ(fleet_jobs[0].job.rails, std::vector<std::string>{"rail0"});
  EXPECT_EQ(fleet_jobs[2].job.rails, std::vector<std::string>{"rail1"});
  EXPECT_EQ(fleet_jobs[3].job.rails, (std::vector<std::string>{"rail0", "rail1"}));
  // The static entry probes its named peer; the fleet entries are not planned against it.
  const auto static_jobs = PlanProbes(config, Rails());
  ASSERT_EQ(static_jobs.size(), 2u);
  EXPECT_EQ(static_jobs[0].job.peer, "static-b");
  // k = 2 on two rails: ucx_rtt at its two default sizes, the multi-rail kind at one.
  EXPECT_EQ(MaxFleetProbeSeries(config, Rails()), 2u * 2 * 2 + 2u * 1);
}

}  // namespace
}  // namespace rail::agent
