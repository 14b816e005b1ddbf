// EvaluateSnapshot on the GPU fixture trees: the PCIe topology and peer memory come from the
// snapshot, the capabilities from the context.
#include <gmock/gmock.h>

#include "rail/health/snapshot_checks.h"
#include "rail/sysfs/filesystem.h"

namespace rail::health {
namespace {

struct FixtureHost {
  explicit FixtureHost(const std::string& tree)
      : sys(std::string(RAIL_FIXTURES) + "/" + tree + "/sys"),
        proc(std::string(RAIL_FIXTURES) + "/" + tree + "/proc") {
    sources.sys = &sys;
    sources.proc = &proc;
  }

  std::vector<CheckResult> Evaluate(const Context& context = {}) {
    sysfs::ReadErrors errors;
    inventory::Snapshot snapshot(sources, errors);
    return EvaluateSnapshot(snapshot, context, context.counter_history->Readings()).checks;
  }

  sysfs::RootedFilesystem sys;
  sysfs::RootedFilesystem proc;
  inventory::Sources sources;
};

std::vector<std::string> Failing(const std::vector<CheckResult>& checks, const std::string& check) {
  std::vector<std::string> rails;
  for (const auto& result : checks) {
    if (result.check == check && !result.ok) rails.push_back(result.rail);
  }
  return rails;
}

std::size_t Count(const std::vector<CheckResult>& checks, const std::string& check) {
  std::size_t count = 0;
  for (const auto& result : checks) count += result.check == check ? 1 : 0;
  return count;
}

TEST(EvaluateSnapshotTest, HealthySparkHasNoPcieOrAffinityFailure) {
  FixtureHost host("spark-dual-rail");
  const auto checks = host.Evaluate();
  EXPECT_THAT(Failing(checks, "pcie_link"), ::testing::IsEmpty());
  EXPECT_THAT(Failing(checks, "gpu_nic_affinity"), ::testing::IsEmpty());
  EXPECT_GT(Count(checks, "pcie_link"), 0u) << "the Spark's NICs have PCIe links to judge";
}

TEST(EvaluateSnapshotTest, HgxFailsPcieLinkForMlx5_5Only) {
  FixtureHost host("hgx-8gpu");
  const auto checks = host.Evaluate();
  EXPECT_THAT(Failing(checks, "pcie_link"), ::testing::ElementsAre("mlx5_5:1"));
  const auto* verdict = FindVerdict(checks, "pcie_link", "mlx5_5:1", "");
  ASSERT_NE(verdict, nullptr);
  EXPECT_EQ(verdict->reason,
            "mlx5_5 (0000:86:00.0) at 32 GT/s x8, can train at 32 GT/s x16: reseat or check the "
            "slot/riser");
  EXPECT_EQ(Count(checks, "pcie_link"), 9u);  // 8 rails and the GPUs' host-wide verdict
  EXPECT_THAT(Failing(checks, "gpu_nic_affinity"), ::testing::IsEmpty());
  EXPECT_EQ(Count(checks, "gpu_nic_affinity"), 9u);
  EXPECT_EQ(Count(checks, "gpu_direct"), 0u) << "capabilities unknown: nothing said";
}

TEST(EvaluateSnapshotTest, HgxGpuDirectReadsPeerMemoryFromSysfsAndTheDriverFromTheContext) {
  FixtureHost host("hgx-8gpu");
  probe::WorkerCapabilities capabilities;
  capabilities.cuda.loaded = true;
  gpu::CudaDevice device;
  device.pci_bus_id = "0000:03:00.0";
  device.gpu_direct_rdma = true;
  capabilities.cuda.devices = {device};
  capabilities.ucx_memory_types_known = true;
  capabilities.ucx_memory_types = {"host", "cuda"};
  Context context;
  context.capabilities = [&capabilities] { return capabilities; };
  const auto with_gpu_direct = host.Evaluate(context);
  const CheckResult* verdict = FindVerdict(with_gpu_direct, "gpu_direct", "", "");
  ASSERT_NE(verdict, nullptr);
  EXPECT_TRUE(verdict->ok) << verdict->reason;  // nv_mem in the fixture

  capabilities.cuda.devices[0].gpu_direct_rdma = false;
  const auto checks = host.Evaluate(context);
  verdict = FindVerdict(checks, "gpu_direct", "", "");
  ASSERT_NE(verdict, nullptr);
  EXPECT_FALSE(verdict->ok);
  EXPECT_THAT(verdict->reason, ::testing::HasSubstr("GPU 0000:03:00.0"));
}

}  // namespace
}  // namespace rail::health
