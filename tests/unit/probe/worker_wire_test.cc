// The agent <-> probe worker wire encoding (probe/worker/wire.h): results and parameters survive
// the round trip, and garbage is refused with the field named.
#include <gtest/gtest.h>

#include "probe/worker/wire.h"

namespace rail::probe {
namespace {

using namespace std::chrono_literals;

TEST(WorkerWireTest, ResultSurvivesTheRoundTrip) {
  ProbeResult result;
  result.kind = ProbeKind::kMultirailCapacity;
  result.peer = "10.0.0.2:9841";
  result.rails = {"rail0", "rail1"};
  result.error_reason = "ucx:Connection reset by remote peer";
  result.finished_at = std::chrono::system_clock::time_point(123456789ns);
  result.retry_after = 2500ms;
  result.bytes = 1ull << 40;
  result.per_rail = {{"rail0", 1.5e9, 3000}};
  result.rtt_samples_seconds = {1e-5, 2e-5};
  result.rtt = LatencySummary{2, 1e-5, 1e-5, 2e-5, 2e-5, 2e-5, 2e-5};
  result.lanes = {{"tcp", "ra0", "rail0"}};
  result.counters = {{"rail1", 10, 20, 0.25}};
  nic::FabricReading reading{"eth1", "mlx5_core", 1491, {}, true};
  reading.samples.push_back({nic::FabricCounter::kPfcPauseMicroseconds, nic::Direction::kRx, 3u,
                             nic::PciOperation::kNone, 400000, "rx_prio3_pause_duration"});
  reading.samples.push_back({nic::FabricCounter::kLinkDownEvents, nic::Direction::kNone,
                             std::nullopt, nic::PciOperation::kNone, 2, "link_down_events_phy"});
  result.fabric = {{"rail0", 2.5, {reading}, {{"hw_counters/out_of_sequence", 7}}}};
  result.peer_cpu_seconds = 0.5;
  result.peer_rail_mtus = {{"rail0", 9000}};
  result.memory = gpu::MemoryType::kCuda;
  result.memory_path = "staged";
  result.gpu_pci_bus_id = "0000:17:00.0";
  result.gpu_link_speed_gts = 16.0;
  std::string error;
  const auto back = worker::ResultFromJson(worker::ToJson(result), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(worker::ToJson(*back), worker::ToJson(result));
  EXPECT_EQ(back->finished_at, result.finished_at);
  EXPECT_EQ(back->retry_after, 2500ms);
  EXPECT_EQ(back->per_rail.at(0).bytes, 3000u);
  EXPECT_EQ(back->rtt->p50, 1e-5);
  EXPECT_EQ(back->memory, gpu::MemoryType::kCuda);
  EXPECT_EQ(back->memory_path, "staged");
  EXPECT_EQ(back->gpu_link_speed_gts, std::optional<double>(16.0));
  ASSERT_EQ(back->fabric.size(), 1u);
  EXPECT_EQ(back->fabric[0].seconds, 2.5);
  EXPECT_EQ(back->fabric[0].counters.at("hw_counters/out_of_sequence"), 7u);
  ASSERT_EQ(back->fabric[0].nic.at(0).samples.size(), 2u);
  const auto& pause = back->fabric[0].nic[0].samples[0];
  EXPECT_EQ(pause.counter, nic::FabricCounter::kPfcPauseMicroseconds);
  EXPECT_EQ(pause.direction, nic::Direction::kRx);
  EXPECT_EQ(pause.priority, std::optional<unsigned>(3));
  EXPECT_EQ(pause.value, 400000u);
  EXPECT_EQ(back->fabric[0].nic[0].samples[1].priority, std::nullopt);
  // A counter kind this build does not know is refused, not cast.
  auto garbled = worker::ToJson(result);
  garbled["fabric"][0]["nic"][0]["samples"][0]["counter"] = 200;
  EXPECT_FALSE(worker::ResultFromJson(garbled, &error));
}

TEST(WorkerWireTest, ParamsSurviveTheRoundTripAndGarbageIsRefused) {
  ProbeParams params;
  params.kind = ProbeKind::kUcxRtt;
  params.operation = UcxOperation::kGet;
  params.rails = {{"rail0", "ra0", "ra0", "10.0.0.1", "", 0, false, std::nullopt}};
  params.timeout = 1234ms;
  params.memory = gpu::MemoryType::kCudaHost;
  std::string error;
  const auto back = worker::ParamsFromJson(worker::ToJson(params), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(worker::ToJson(*back), worker::ToJson(params));
  EXPECT_EQ(back->memory, gpu::MemoryType::kCudaHost);
  nlohmann::json vram = worker::ToJson(params);
  vram["memory"] = "vram";
  EXPECT_FALSE(worker::ParamsFromJson(vram, &error));
  nlohmann::json bad = worker::ToJson(params);
  bad["kind"] = "warp_drive";
  EXPECT_FALSE(worker::ParamsFromJson(bad, &error));
  EXPECT_NE(error.find("warp_drive"), std::string::npos) << error;
}

}  // namespace
}  // namespace rail::probe
