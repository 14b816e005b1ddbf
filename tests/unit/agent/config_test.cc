#include "rail/agent/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>

#include "config_error.h"
#include "rail/probing/plan.h"

namespace rail::agent {
namespace {

using ::testing::HasSubstr;

TEST(ConfigTest, EmptyDocumentIsEmptyConfigurationThatDiscovers) {
  const auto config = ParseConfig("", "test.yaml");
  EXPECT_TRUE(config.probing.rails.empty());
  EXPECT_TRUE(config.probing.DiscoverUnlisted());
}

TEST(ConfigTest, ParsesRails) {
  const auto config = ParseConfig(R"(
rails:
  - name: rail0
    device: rocep1s0f0
    port: 1
    expected_rate_gbps: 100
  - name: lab1
    netdev: ra1
    ipv4: 10.201.0.1
    transport: tcp
)",
                                  "test.yaml");
  ASSERT_EQ(config.probing.rails.size(), 2u);
  EXPECT_EQ(config.probing.rails[0].name, "rail0");
  EXPECT_EQ(config.probing.rails[0].device, "rocep1s0f0");
  EXPECT_EQ(config.probing.rails[0].port, 1u);
  EXPECT_DOUBLE_EQ(*config.probing.rails[0].expected_rate_gbps, 100.0);
  EXPECT_FALSE(config.probing.rails[0].transport.has_value());
  EXPECT_EQ(config.probing.rails[1].netdev, "ra1");
  EXPECT_EQ(config.probing.rails[1].ipv4, "10.201.0.1");
  EXPECT_EQ(config.probing.rails[1].transport, inventory::TransportClass::kTcp);
  // Listing rails switches discovery of the others off unless asked for.
  EXPECT_FALSE(config.probing.DiscoverUnlisted());
}

TEST(ConfigTest, DiscoverRailsOverridesDefault) {
  const auto config =
      ParseConfig("discover_rails: true\nrails:\n  - {name: a, device: d}\n", "test.yaml");
  EXPECT_TRUE(config.probing.DiscoverUnlisted());
}

TEST(ConfigTest, ErrorsNameTheOffendingKey) {
  EXPECT_THAT(ErrorOf("rails:\n  - {name: a, device: d, prot: 1}\n"),
              HasSubstr("test.yaml: rails[0].prot: unknown key"));
  EXPECT_THAT(ErrorOf("rails:\n  - {name: a, device: d, port: one}\n"),
              HasSubstr("rails[0].port: expected a port number"));
  EXPECT_THAT(ErrorOf("rails:\n  - {name: a, device: d, port: 0}\n"),
              HasSubstr("rails[0].port: must be between 1 and 255"));
  EXPECT_THAT(ErrorOf("rails:\n  - {device: d}\n"), HasSubstr("rails[0].name: missing"));
  EXPECT_THAT(ErrorOf("rails:\n  - {name: a}\n"), HasSubstr("rails[0]: needs a device"));
  EXPECT_THAT(ErrorOf("rails:\n  - {name: a, device: d}\n  - {name: a, device: e}\n"),
              HasSubstr("rails[1].name: duplicate rail name 'a'"));
  EXPECT_THAT(ErrorOf("rails:\n  - {name: a, device: d, transport: udp}\n"),
              HasSubstr("rails[0].transport: expected rdma or tcp, got 'udp'"));
  EXPECT_THAT(ErrorOf("rails:\n  - {name: a, device: d, expected_rate_gbps: -5}\n"),
              HasSubstr("rails[0].expected_rate_gbps: must be positive"));
  EXPECT_THAT(ErrorOf("rails: {name: a}\n"), HasSubstr("rails: expected a list"));
  EXPECT_THAT(ErrorOf("railz: []\n"), HasSubstr("railz: unknown key"));
  EXPECT_THAT(ErrorOf("discover_rails: maybe\n"), HasSubstr("discover_rails: expected true"));
  EXPECT_THAT(ErrorOf("rails: [\n"), HasSubstr("test.yaml: not valid YAML"));
  EXPECT_THAT(ErrorOf("- just\n- a list\n"), HasSubstr("(top level): expected a mapping"));
}

TEST(ConfigTest, BulkConcurrencyIsPerHostUnlessTheConfigurationSaysRail) {
  const auto by_default = ParseConfig("responder: {}\n", "test.yaml");
  EXPECT_EQ(by_default.probing.bulk_concurrency, base::BulkConcurrency::kPerHost);
  EXPECT_EQ(by_default.probing.responder.limits.bulk_concurrency, base::BulkConcurrency::kPerHost);
  // One key for both sides: the responder's gate and this agent's own schedule.
  const auto per_rail = ParseConfig("bulk_concurrency: rail\nresponder: {}\n", "test.yaml");
  EXPECT_EQ(per_rail.probing.bulk_concurrency, base::BulkConcurrency::kPerRail);
  EXPECT_EQ(per_rail.probing.responder.limits.bulk_concurrency, base::BulkConcurrency::kPerRail);
  EXPECT_EQ(ParseConfig("bulk_concurrency: host\n", "test.yaml").probing.bulk_concurrency,
            base::BulkConcurrency::kPerHost);
  EXPECT_THAT(ErrorOf("bulk_concurrency: port\n"),
              HasSubstr("bulk_concurrency: expected host or rail, got 'port'"));
}

TEST(ConfigTest, ResponderAllowedNetworksAndPerAddressCap) {
  const auto config = ParseConfig(R"(
responder:
  allowed_networks: [10.0.0.0/8, "fd00::/8", 192.168.1.7]
  limits:
    max_connections_per_ip: 3
)",
                                  "test.yaml");
  EXPECT_EQ(config.probing.responder.allowed_networks,
            (std::vector<std::string>{"10.0.0.0/8", "fd00::/8", "192.168.1.7"}));
  EXPECT_EQ(config.probing.responder.limits.max_connections_per_ip, 3u);
  EXPECT_EQ(ParseConfig("responder: {}\n", "t").probing.responder.limits.max_connections_per_ip,
            8u);
  EXPECT_TRUE(ParseConfig("responder: {}\n", "t").probing.responder.allowed_networks.empty());
  EXPECT_THAT(ErrorOf("responder:\n  allowed_networks: [10.0.0.0/8, 10.0.0.1/8]\n"),
              HasSubstr("responder.allowed_networks[1]: '10.0.0.1/8' has host bits set"));
  EXPECT_THAT(ErrorOf("responder:\n  allowed_networks: [nowhere]\n"),
              HasSubstr("responder.allowed_networks[0]: 'nowhere' is not an IPv4 or IPv6"));
  EXPECT_THAT(ErrorOf("responder:\n  allowed_networks: []\n"),
              HasSubstr("responder.allowed_networks: empty"));
  EXPECT_THAT(ErrorOf("responder:\n  allowed_networks: 10.0.0.0/8\n"),
              HasSubstr("responder.allowed_networks: expected a list"));
  EXPECT_THAT(ErrorOf("responder:\n  limits: {max_connections_per_ip: 0}\n"),
              HasSubstr("responder.limits.max_connections_per_ip: must be positive"));
}

TEST(ConfigTest, ResponderServedBulkBudget) {
  const auto defaults = ParseConfig("responder: {}\n", "t").probing.responder.limits;
  EXPECT_EQ(defaults.max_served_bulk_time_fraction_per_rail, 0.1);
  EXPECT_EQ(defaults.max_served_bytes_per_hour, std::uint64_t{2} << 40);
  const auto config = ParseConfig(R"(
responder:
  limits:
    max_served_bulk_time_fraction_per_rail: 0.25
    max_served_bytes_per_hour: 4398046511104
)",
                                  "test.yaml");
  EXPECT_EQ(config.probing.responder.limits.max_served_bulk_time_fraction_per_rail, 0.25);
  EXPECT_EQ(config.probing.responder.limits.max_served_bytes_per_hour, std::uint64_t{4} << 40);
  EXPECT_THAT(
      ErrorOf("responder:\n  limits: {max_served_bulk_time_fraction_per_rail: 0}\n"),
      HasSubstr("responder.limits.max_served_bulk_time_fraction_per_rail: must be positive"));
  EXPECT_THAT(ErrorOf("responder:\n  limits: {max_served_bulk_time_fraction_per_rail: 1.5}\n"),
              HasSubstr("responder.limits.max_served_bulk_time_fraction_per_rail: at most 1"));
  EXPECT_THAT(ErrorOf("responder:\n  limits: {max_served_bytes_per_hour: -1}\n"),
              HasSubstr("responder.limits.max_served_bytes_per_hour"));
}

TEST(ConfigTest, HealthThresholdsDefaultAndParse) {
  const auto defaults = ParseConfig("", "test.yaml");
  EXPECT_DOUBLE_EQ(defaults.health.probe_throughput_min_line_rate_fraction, 0.5);
  EXPECT_DOUBLE_EQ(defaults.health.probe_throughput_min_sibling_fraction, 0.5);
  EXPECT_DOUBLE_EQ(defaults.health.multirail_max_rail_share, 0.8);
  EXPECT_EQ(defaults.health.gpu_nic_max_path, inventory::PciPath::kPxb);
  EXPECT_DOUBLE_EQ(defaults.health.gpu_memory_min_host_ratio, 0.5);
  const auto config = ParseConfig(R"(
health:
  probe_throughput_min_line_rate_fraction: 0.7
  probe_throughput_min_sibling_fraction: 0.6
  multirail_max_rail_share: 0.9
  gpu_nic_max_path: NODE
  gpu_memory_min_host_ratio: 0.25
)",
                                  "test.yaml");
  EXPECT_EQ(config.health.gpu_nic_max_path, inventory::PciPath::kNode);
  EXPECT_DOUBLE_EQ(config.health.gpu_memory_min_host_ratio, 0.25);
  EXPECT_DOUBLE_EQ(config.health.probe_throughput_min_line_rate_fraction, 0.7);
  EXPECT_DOUBLE_EQ(config.health.probe_throughput_min_sibling_fraction, 0.6);
  EXPECT_DOUBLE_EQ(config.health.multirail_max_rail_share, 0.9);
}

TEST(ConfigTest, FabricThresholdsDefaultAndParse) {
  const auto defaults = ParseConfig("", "test.yaml");
  EXPECT_EQ(defaults.health.fabric_window, std::chrono::minutes(5));
  EXPECT_DOUBLE_EQ(defaults.health.pfc_pause_max_fraction, 0.1);
  EXPECT_DOUBLE_EQ(defaults.health.link_max_corrected_bit_ratio, 1e-6);
  EXPECT_DOUBLE_EQ(defaults.health.nic_temperature_margin_celsius, 10.0);
  const auto config = ParseConfig(R"(
health:
  fabric_window: 2m
  pfc_pause_max_fraction: 0.25
  link_max_corrected_bit_ratio: 1e-5
  nic_temperature_margin_celsius: 5
)",
                                  "test.yaml");
  EXPECT_EQ(config.health.fabric_window, std::chrono::minutes(2));
  EXPECT_DOUBLE_EQ(config.health.pfc_pause_max_fraction, 0.25);
  EXPECT_DOUBLE_EQ(config.health.link_max_corrected_bit_ratio, 1e-5);
  EXPECT_DOUBLE_EQ(config.health.nic_temperature_margin_celsius, 5.0);
  EXPECT_THAT(ErrorOf("health:\n  pfc_pause_max_fraction: 2\n"),
              HasSubstr("health.pfc_pause_max_fraction: must be greater than 0 and at most 1"));
  EXPECT_THAT(ErrorOf("health:\n  nic_temperature_margin_celsius: -1\n"),
              HasSubstr("health.nic_temperature_margin_celsius: must be positive"));
}

TEST(ConfigTest, HealthErrorsNameTheKey) {
  EXPECT_THAT(ErrorOf("health:\n  multirail_max_share: 0.5\n"),
              HasSubstr("test.yaml: health.multirail_max_share: unknown key"));
  EXPECT_THAT(ErrorOf("health:\n  multirail_max_rail_share: 1\n"),
              HasSubstr("health.multirail_max_rail_share: must be below 1"));
  EXPECT_THAT(ErrorOf("health:\n  probe_throughput_min_sibling_fraction: 0\n"),
              HasSubstr("health.probe_throughput_min_sibling_fraction: must be greater than 0"));
  EXPECT_THAT(ErrorOf("health:\n  probe_throughput_min_line_rate_fraction: 1.5\n"),
              HasSubstr("health.probe_throughput_min_line_rate_fraction: must be greater than 0 "
                        "and at most 1, got 1.5"));
  EXPECT_THAT(ErrorOf("health:\n  probe_throughput_min_line_rate_fraction: half\n"),
              HasSubstr("health.probe_throughput_min_line_rate_fraction: expected a number"));
  EXPECT_THAT(ErrorOf("health: [1]\n"), HasSubstr("health: expected a mapping"));
  EXPECT_THAT(ErrorOf("health:\n  gpu_nic_max_path: far\n"),
              HasSubstr("health.gpu_nic_max_path: expected PIX, PXB, PHB, NODE or SYS, got 'far'"));
  EXPECT_THAT(ErrorOf("health:\n  gpu_memory_min_host_ratio: 0\n"),
              HasSubstr("health.gpu_memory_min_host_ratio: must be greater than 0"));
}

TEST(ConfigTest, RocePriorityDefaultsToThreeAndIsAPriority) {
  EXPECT_EQ(ParseConfig("", "test.yaml").health.roce_priority, 3u);
  EXPECT_EQ(ParseConfig("health:\n  roce_priority: 5\n", "test.yaml").health.roce_priority, 5u);
  EXPECT_THAT(ErrorOf("health:\n  roce_priority: 8\n"),
              HasSubstr("health.roce_priority: must be 0 to 7"));
  EXPECT_THAT(ErrorOf("health:\n  roce_priority: -1\n"), HasSubstr("health.roce_priority"));
}

TEST(ConfigTest, ProbeFailingRunsDefaultsToThreeAndIsPositive) {
  EXPECT_EQ(ParseConfig("", "test.yaml").health.probe_failing_runs, 3u);
  EXPECT_EQ(
      ParseConfig("health:\n  probe_failing_runs: 1\n", "test.yaml").health.probe_failing_runs, 1u);
  EXPECT_THAT(ErrorOf("health:\n  probe_failing_runs: 0\n"),
              HasSubstr("health.probe_failing_runs"));
}

TEST(ConfigTest, UcxDeviceQuirkWorkaroundIsOffUnlessSaid) {
  EXPECT_FALSE(ParseConfig("", "test.yaml").probing.ucx_device_quirk_workaround);
  EXPECT_TRUE(ParseConfig("ucx_device_quirk_workaround: true\n", "test.yaml")
                  .probing.ucx_device_quirk_workaround);
  EXPECT_THAT(ErrorOf("ucx_device_quirk_workaround: sometimes\n"),
              HasSubstr("ucx_device_quirk_workaround"));
}

TEST(ConfigTest, ProbeMemoryDefaultsToHostAndParsesEachType) {
  const AgentConfig config = ParseConfig(
      "peers: [{name: b, address: 'h:1'}]\nprobes:\n"
      "  - {kind: ucx_throughput}\n"
      "  - {kind: ucx_throughput, memory: cuda}\n"
      "  - {kind: multirail_capacity, memory: cuda_host}\n"
      "  - {kind: ucx_multirail_throughput, memory: host}\n",
      "test.yaml");
  ASSERT_EQ(config.probing.probes.size(), 4u);
  EXPECT_EQ(config.probing.probes[0].memory, gpu::MemoryType::kHost);
  EXPECT_EQ(config.probing.probes[1].memory, gpu::MemoryType::kCuda);
  EXPECT_EQ(config.probing.probes[2].memory, gpu::MemoryType::kCudaHost);
  EXPECT_EQ(config.probing.probes[3].memory, gpu::MemoryType::kHost);
}

TEST(ConfigTest, ProbeMemoryErrorsNameTheKeyAndTheKinds) {
  const std::string peers = "peers: [{name: b, address: 'h:1'}]\nprobes:\n";
  EXPECT_THAT(ErrorOf(peers + "  - {kind: ucx_throughput, memory: vram}\n"),
              HasSubstr("probes[0].memory: expected host, cuda or cuda_host, got 'vram'"));
  // The latency and TCP kinds move host memory only: GPU memory there is refused, not ignored.
  for (const char* kind : {"ucx_rtt", "tcp_throughput", "tcp_rtt"}) {
    EXPECT_THAT(ErrorOf(peers + "  - {kind: " + kind + ", memory: cuda}\n"),
                HasSubstr("probes[0].memory: memory 'cuda' needs kind ucx_throughput"))
        << kind;
  }
  EXPECT_EQ(ErrorOf(peers + "  - {kind: tcp_rtt, memory: host}\n"), "");
}

// Found by fuzz/probe_config_fuzz: from_chars reads "inf", "nan" and 1e300, and converting
// those to an integer count of milliseconds was undefined behaviour.
TEST(ConfigTest, DurationsOutOfRangeAreMalformed) {
  EXPECT_EQ(ParseDuration("2s"), std::chrono::milliseconds(2000));
  EXPECT_EQ(ParseDuration("250ms"), std::chrono::milliseconds(250));
  EXPECT_EQ(ParseDuration("87600h"), kMaxDuration);
  for (const char* text : {"1e300", "1e300h", "inf", "infs", "nan", "-nan", "-1s", "87601h"}) {
    EXPECT_EQ(ParseDuration(text), std::nullopt) << text;
  }
  EXPECT_THAT(ErrorOf("peers: [{name: b, address: 'h:1'}]\nprobes:\n  - {kind: tcp_rtt, "
                      "interval: 1e300}\n"),
              HasSubstr("probes[0].interval: expected a positive duration"));
}

// Found by fuzz/probe_config_fuzz: a list or a mapping used as a key made yaml-cpp throw its own
// exception (not a ConfigError, naming no key) out of ParseConfig.
TEST(ConfigTest, NonScalarKeysAreErrorsThatNameTheirMapping) {
  EXPECT_THAT(ErrorOf("rails:\n  - {name: a, device: d, [x]: 1}\n"),
              HasSubstr("test.yaml: rails[0]: expected plain keys"));
  EXPECT_THAT(ErrorOf("{a: 1}: 2\n"), HasSubstr("test.yaml: (top level): expected plain keys"));
  EXPECT_THAT(ErrorOf("responder: {limits: {[1, 2]: 3}}\n"),
              HasSubstr("responder.limits: expected plain keys"));
}

TEST(ConfigTest, UnreadableFileNamesTheFile) {
  try {
    LoadConfigFile("/nonexistent/rail.yaml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("/nonexistent/rail.yaml: cannot be read"));
  }
}

TEST(ConfigTest, LoadsFile) {
  const std::string path = ::testing::TempDir() + "/rail_config_test.yaml";
  {
    std::ofstream file(path);
    file << "rails:\n  - name: r\n    device: mlx5_0\n";
  }
  const auto config = LoadConfigFile(path);
  std::remove(path.c_str());
  ASSERT_EQ(config.probing.rails.size(), 1u);
  EXPECT_EQ(config.probing.rails[0].device, "mlx5_0");
}

// The fleet section, and the probe jobs the plan's pairs become.

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
  ASSERT_TRUE(config.probing.fleet);
  const auto& fleet = *config.probing.fleet;
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
  EXPECT_EQ(config.probing.probes.size(), 2u);
}

TEST(FleetConfigTest, DefaultsAreTheFleetLayers) {
  const auto config = ParseConfig("fleet: {discovery: {static: ['a:1']}}", "test.yaml");
  ASSERT_TRUE(config.probing.fleet);
  EXPECT_EQ(config.probing.fleet->peers_per_rail, fleet::kDefaultPeersPerRail);
  EXPECT_EQ(config.probing.fleet->epoch, fleet::kDefaultEpochLength);
  EXPECT_FALSE(config.probing.fleet->self);
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
  config.probing.probes.push_back(config.probing.probes[0]);
  config.probing.probes.back().peers = {"static-b"};
  const std::vector<fleet::PlannedPair> pairs = {
      {"10.0.0.2:9841", "rail0"}, {"10.0.0.3:9841", "rail0"}, {"10.0.0.2:9841", "rail1"}};
  const auto fleet_jobs = probing::PlanFleetProbes(config.probing, Rails(), pairs);
  // ucx_rtt: one job per pair; the multi-rail kind: one per planned peer of rail0, over both.
  ASSERT_EQ(fleet_jobs.size(), 5u);
  EXPECT_EQ(fleet_jobs[0].job.peer, "10.0.0.2:9841");
  EXPECT_EQ(fleet_jobs[0].params.peer, "10.0.0.2:9841");
  EXPECT_EQ(fleet_jobs[0].job.rails, std::vector<std::string>{"rail0"});
  EXPECT_EQ(fleet_jobs[2].job.rails, std::vector<std::string>{"rail1"});
  EXPECT_EQ(fleet_jobs[3].job.rails, (std::vector<std::string>{"rail0", "rail1"}));
  // The static entry probes its named peer; the fleet entries are not planned against it.
  const auto static_jobs = probing::PlanProbes(config.probing, Rails());
  ASSERT_EQ(static_jobs.size(), 2u);
  EXPECT_EQ(static_jobs[0].job.peer, "static-b");
  // k = 2 on two rails: ucx_rtt at its two default sizes, the multi-rail kind at one.
  EXPECT_EQ(probing::MaxFleetProbeSeries(config.probing, Rails()), 2u * 2 * 2 + 2u * 1);
}

}  // namespace
}  // namespace rail::agent
