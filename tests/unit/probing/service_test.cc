// The probing service's plan application and reload rules, on a fixture tree and a fake clock
// that never reaches a probe's first run: what is planned and withdrawn is what is tested.
#include "rail/probing/service.h"

#include <gtest/gtest.h>

#include "rail/sysfs/filesystem.h"
#include "support/fake_clock.h"

namespace rail::probing {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

ProbeConfig Probe(const std::string& kind, std::vector<std::string> rails = {}) {
  ProbeConfig probe;
  probe.kind = kind;
  probe.rails = std::move(rails);
  probe.interval = hours(1);
  probe.duration = seconds(1);
  probe.timeout = seconds(5);
  probe.max_bytes = 1 << 20;
  return probe;
}

ProbingConfig Config() {
  ProbingConfig config;
  for (const auto* device : {"rocep1s0f0", "rocep1s0f1"}) {
    inventory::RailConfig rail;
    rail.name = "rail" + std::to_string(config.rails.size());
    rail.device = device;
    config.rails.push_back(rail);
  }
  config.peers = {{.name = "b", .address = "127.0.0.1:1"}};
  config.probes = {Probe("tcp_rtt"), Probe("tcp_throughput", {"rail0"})};
  return config;
}

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServiceOptions options;
    options.peer_insecure = true;  // no responder section, so no secret: probes go insecure
    options.seed = 3;
    service = std::make_unique<ProbingService>(Config(), options, sys, clock, store);
    service->Start();
  }
  // A finished run of a series, as if the runner had filed it.
  void Ran(const std::string& kind, const std::string& rail) {
    probe::ProbeResult result;
    result.kind = *probe::ParseProbeKind(kind);
    result.peer = "b";
    result.rails = {rail};
    result.success = true;
    result.finished_at = clock.WallNow();
    store.Record(result, hours(1));
  }
  std::vector<std::string> Series() const {
    std::vector<std::string> names;
    for (const auto& state : store.Snapshot()) {
      names.push_back(state.key.kind + "/" + state.key.rail + "/" + std::to_string(state.runs));
    }
    return names;
  }

  sysfs::RootedFilesystem sys{std::string(RAIL_FIXTURES) + "/spark-dual-rail/sys"};
  test::FakeClock clock;
  probe::ResultStore store{clock};
  std::unique_ptr<ProbingService> service;
};

TEST_F(ServiceTest, StartsWithoutResponderWorkerOrFleetWhenNoneIsConfigured) {
  const auto status = service->Status();
  EXPECT_FALSE(status.responder);
  EXPECT_FALSE(status.worker);
  EXPECT_FALSE(status.fleet);
  EXPECT_EQ(service->ResponderPort(), 0);
  ASSERT_EQ(service->rails().size(), 2u);
  EXPECT_EQ(service->rails()[0].rdma_device, "rocep1s0f0");
}

TEST_F(ServiceTest, AReloadKeepsUnchangedSeriesAndWithdrawsRemovedOnes) {
  Ran("tcp_rtt", "rail0");
  Ran("tcp_rtt", "rail0");
  Ran("tcp_rtt", "rail1");
  Ran("tcp_throughput", "rail0");
  auto next = Config();
  next.probes = {Probe("tcp_rtt", {"rail0"}), Probe("tcp_throughput", {"rail1"})};
  EXPECT_EQ(service->Apply(next), std::nullopt);
  // rail0's tcp_rtt stayed (its count with it); rail1's and the moved throughput probe went.
  EXPECT_EQ(Series(), std::vector<std::string>{"tcp_rtt/rail0/2"});
}

TEST_F(ServiceTest, RestartOnlyChangesAreRefusedAsAWhole) {
  Ran("tcp_rtt", "rail1");
  auto moved_rail = Config();
  moved_rail.rails[1].device = "roceP2p1s0f0";
  moved_rail.probes = {Probe("tcp_rtt", {"rail0"})};  // would withdraw rail1's series
  const auto refused = service->Apply(moved_rail);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("rails"), std::string::npos) << *refused;
  EXPECT_EQ(Series(), std::vector<std::string>{"tcp_rtt/rail1/1"});

  auto responder = Config();
  responder.responder.listen_address = "127.0.0.1:9";
  const auto refused_responder = service->Apply(responder);
  ASSERT_TRUE(refused_responder);
  EXPECT_NE(refused_responder->find("responder"), std::string::npos) << *refused_responder;

  auto bulk = Config();
  bulk.bulk_concurrency = base::BulkConcurrency::kPerRail;
  EXPECT_TRUE(service->Apply(bulk));
}

TEST_F(ServiceTest, APlanThatCannotRunIsRefusedAndTheRunningOneStays) {
  Ran("tcp_rtt", "rail0");
  auto unknown_rail = Config();
  unknown_rail.probes = {Probe("tcp_rtt", {"rail7"})};
  const auto refused = service->Apply(unknown_rail);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("probes[0].rails: this host has no rail 'rail7'"), std::string::npos)
      << *refused;

  auto over_budget = Config();
  over_budget.probes = {Probe("tcp_throughput", {"rail0"})};
  over_budget.probes[0].interval = seconds(10);  // 5 s of every 10 on the rail
  const auto refused_budget = service->Apply(over_budget);
  ASSERT_TRUE(refused_budget);
  EXPECT_EQ(Series(), std::vector<std::string>{"tcp_rtt/rail0/1"});
  // The running configuration is still the one applied: the same file again changes nothing.
  EXPECT_EQ(service->Apply(Config()), std::nullopt);
  EXPECT_EQ(Series(), std::vector<std::string>{"tcp_rtt/rail0/1"});
}

TEST_F(ServiceTest, StopIsIdempotentAndRefusesLaterReloads) {
  service->Stop();
  service->Stop();
  const auto refused = service->Apply(Config());
  ASSERT_TRUE(refused);
  EXPECT_EQ(*refused, "the agent is stopping");
}

TEST_F(ServiceTest, AStopRequestedBeforeStartStartsNothing) {
  std::atomic<bool> stop{true};
  ServiceOptions options;
  options.peer_insecure = true;
  options.stop_requested = &stop;
  auto config = Config();
  config.responder.listen_address = "127.0.0.1:9";
  ProbingService stopped(config, options, sys, clock, store);
  stopped.Start();
  EXPECT_EQ(stopped.ResponderPort(), 0);
  EXPECT_FALSE(stopped.Status().responder);
}

}  // namespace
}  // namespace rail::probing
