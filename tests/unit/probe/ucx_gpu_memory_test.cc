// The UCX probes with GPU memory on the fake CUDA driver (tests/fake_cuda: its "device memory" is
// host memory), against an in-process responder over the veth rails of ucx_probe_fixture.h.
// Debian's UCX 1.13 takes host memory only, so memory: cuda is the staged path here: each message
// is copied between device and pinned host memory inside the timed loop, on both sides.
#include <gmock/gmock.h>

#include <memory>

#include "support/fake_cuda.h"
#include "ucx_probe_fixture.h"

namespace rail::probe {
namespace {

using rail::testing::FakeCuda;
using rail::testing::kFakeCudaLibrary;
using ::testing::HasSubstr;
using testing::UcxProbeTest;
using testing::VethRail;

constexpr const char* kGpu = "0000:17:00.0";

class UcxGpuMemoryTest : public UcxProbeTest {
 protected:
  void SetUp() override {
    if (kFakeCudaLibrary == nullptr) GTEST_SKIP() << rail::testing::kNoFakeCuda;
    fake_ = std::make_unique<FakeCuda>(
        nlohmann::json{{"devices", {FakeCuda::Device(kGpu, "Fake H100")}}});
    // The veth rails have no RDMA device, so no topology answers: CUDA device 0, said so.
    ConfigureProbeGpu("/sys", kFakeCudaLibrary);
    UcxProbeTest::SetUp();
  }

  ProbeParams GpuParams(ProbeKind kind, gpu::MemoryType memory,
                        std::vector<ProbeRail> rails = {VethRail(0, 'a')}) const {
    ProbeParams params = Params(kind, std::move(rails));
    params.memory = memory;
    return params;
  }

  std::unique_ptr<FakeCuda> fake_;
};

class StagedOperation : public UcxGpuMemoryTest,
                        public ::testing::WithParamInterface<UcxOperation> {};

TEST_P(StagedOperation, CudaMemoryIsStagedThroughPinnedHostMemory) {
  ProbeParams params = GpuParams(ProbeKind::kUcxThroughput, gpu::MemoryType::kCuda);
  params.operation = GetParam();
  const ProbeResult result = Run(params);
  ASSERT_TRUE(result.success) << result.error_reason << ": " << result.error_message;
  EXPECT_EQ(result.memory, gpu::MemoryType::kCuda);
  EXPECT_EQ(result.memory_path, "staged");
  EXPECT_EQ(result.gpu_pci_bus_id, kGpu);
  EXPECT_THAT(result.error_message, HasSubstr("rail0: no PCIe topology answer"));
  EXPECT_THAT(result.error_message, HasSubstr("CUDA device 0"));
  EXPECT_GT(result.bytes, 0u);
  EXPECT_GT(result.throughput_bytes_per_second, 0);
  // The responder's copies are added to the time the initiator measured.
  EXPECT_GT(result.seconds, 0.25);
  if (testing::MutableVethRouting().routed && GetParam() != UcxOperation::kGet) {
    // The GPU's bytes left through the probed rail's own veth.
    ASSERT_FALSE(result.counters.empty());
    EXPECT_EQ(result.counters[0].rail, "rail0");
    EXPECT_GE(result.counters[0].transmit_bytes, result.bytes);
  }
  // Both sides allocated device memory (the fake logs every allocation).
  EXPECT_GE(fake_->CallersOf("cuMemAlloc").size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(AllOperations, StagedOperation,
                         ::testing::Values(UcxOperation::kPut, UcxOperation::kGet,
                                           UcxOperation::kAm),
                         [](const auto& param_info) {
                           return std::string(UcxOperationName(param_info.param));
                         });

TEST_F(UcxGpuMemoryTest, PinnedHostMemoryMovesAsHostMemory) {
  const ProbeResult result = Run(GpuParams(ProbeKind::kUcxThroughput, gpu::MemoryType::kCudaHost));
  ASSERT_TRUE(result.success) << result.error_reason << ": " << result.error_message;
  EXPECT_EQ(result.memory, gpu::MemoryType::kCudaHost);
  EXPECT_EQ(result.memory_path, "host");
  EXPECT_EQ(result.gpu_pci_bus_id, kGpu);
}

TEST_F(UcxGpuMemoryTest, MultirailCapacityStagesOnEveryRail) {
  const ProbeResult result = Run(GpuParams(ProbeKind::kMultirailCapacity, gpu::MemoryType::kCuda,
                                           {VethRail(0, 'a'), VethRail(1, 'a')}));
  ASSERT_TRUE(result.success) << result.error_reason << ": " << result.error_message;
  EXPECT_EQ(result.memory_path, "staged");
  ASSERT_EQ(result.per_rail.size(), 2u);
  for (const RailThroughput& rail : result.per_rail) EXPECT_GT(rail.bytes_per_second, 0);
  EXPECT_GE(result.seconds, 0.25);
}

TEST_F(UcxGpuMemoryTest, HostMemoryNeverTouchesTheDriver) {
  const ProbeResult result = Run(Params(ProbeKind::kUcxThroughput));
  ASSERT_TRUE(result.success) << result.error_reason << ": " << result.error_message;
  EXPECT_EQ(result.memory_path, "host");
  EXPECT_TRUE(result.gpu_pci_bus_id.empty());
  EXPECT_TRUE(fake_->CallersOf("cuMemAlloc").empty());
}

// A responder that predates the memory field: it serves host memory and says nothing of it.
class OldPeerTest : public UcxGpuMemoryTest {
 protected:
  class ForgetsMemory final : public peer::ProbeSessionHandler {
   public:
    explicit ForgetsMemory(std::unique_ptr<peer::ProbeSessionHandler> inner)
        : inner_(std::move(inner)) {}
    bool Setup(const peer::ProbeSetup& request, nlohmann::json* reply, std::string* reason,
               std::string* message) override {
      peer::ProbeSetup old = request;
      old.memory.clear();
      if (!inner_->Setup(old, reply, reason, message)) return false;
      reply->erase("memory");
      reply->erase("memory_path");
      return true;
    }
    void Serve(const std::atomic<bool>& stop) override { inner_->Serve(stop); }
    nlohmann::json Report() override { return inner_->Report(); }

   private:
    std::unique_ptr<peer::ProbeSessionHandler> inner_;
  };

  peer::ProbeHandlerFactory Factory() override {
    auto inner = MakeProbeHandlerFactory({VethRail(0, 'b'), VethRail(1, 'b')});
    return [inner](const std::string& kind,
                   const std::string& rails) -> std::unique_ptr<peer::ProbeSessionHandler> {
      auto handler = inner(kind, rails);
      if (!handler) return nullptr;
      return std::make_unique<ForgetsMemory>(std::move(handler));
    };
  }
};

TEST_F(OldPeerTest, GpuMemoryIsRefusedNotMislabelled) {
  const ProbeResult result = Run(GpuParams(ProbeKind::kUcxThroughput, gpu::MemoryType::kCuda));
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "peer_memory");
  EXPECT_THAT(result.error_message, HasSubstr("predates memory types"));
  EXPECT_EQ(result.bytes, 0u);
}

TEST_F(OldPeerTest, HostMemoryStillRuns) {
  const ProbeResult result = Run(Params(ProbeKind::kUcxThroughput));
  EXPECT_TRUE(result.success) << result.error_reason << ": " << result.error_message;
}

// A driver that cannot be loaded: a result with reason "cuda" and the driver's message, on the
// initiator; the process goes on.
TEST_F(UcxGpuMemoryTest, AMissingDriverIsAResultNotACrash) {
  ConfigureProbeGpu("/sys", "/nonexistent/libcuda.so.1");
  const ProbeResult result = Run(GpuParams(ProbeKind::kUcxThroughput, gpu::MemoryType::kCuda));
  ConfigureProbeGpu("/sys", kFakeCudaLibrary);
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "cuda");
  EXPECT_THAT(result.error_message, HasSubstr("/nonexistent/libcuda.so.1"));
}

// The fake fails cuInit: the driver's message reaches the result.
TEST_F(UcxGpuMemoryTest, AFailingDriverIsAResultNotACrash) {
  fake_.reset();
  fake_ = std::make_unique<FakeCuda>(nlohmann::json{{"fail_init", true}});
  // Drops the loaded driver, so that the next probe loads it again and meets the failure.
  ConfigureProbeGpu("/sys", "/nonexistent/libcuda.so.1");
  ConfigureProbeGpu("/sys", kFakeCudaLibrary);
  const ProbeResult result = Run(GpuParams(ProbeKind::kUcxThroughput, gpu::MemoryType::kCuda));
  fake_ = std::make_unique<FakeCuda>(
      nlohmann::json{{"devices", {FakeCuda::Device(kGpu, "Fake H100")}}});
  ConfigureProbeGpu("/sys", "/nonexistent/libcuda.so.1");
  ConfigureProbeGpu("/sys", kFakeCudaLibrary);
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "cuda");
  EXPECT_THAT(result.error_message, HasSubstr("CUDA driver"));
}

}  // namespace
}  // namespace rail::probe
