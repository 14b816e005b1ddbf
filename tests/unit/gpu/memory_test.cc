#include "rail/gpu/memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "support/fake_cuda.h"

namespace rail::gpu {
namespace {

using testing::FakeCuda;
using testing::kFakeCudaLibrary;

TEST(MemoryTest, HostBuffersArePageAligned) {
  auto buffer = AllocateHost(10000);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(buffer->type(), MemoryType::kHost);
  EXPECT_EQ(buffer->size(), 10000u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer->data()) % 4096, 0u);
}

TEST(MemoryTest, MemoryTypeNamesRoundTrip) {
  for (MemoryType type : {MemoryType::kHost, MemoryType::kCuda, MemoryType::kCudaHost}) {
    EXPECT_EQ(ParseMemoryType(MemoryTypeName(type)), type);
  }
  EXPECT_EQ(ParseMemoryType("vram"), std::nullopt);
}

class DeviceMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kFakeCudaLibrary == nullptr) GTEST_SKIP() << testing::kNoFakeCuda;
    fake_ = std::make_unique<FakeCuda>(nlohmann::json{
        {"devices",
         {FakeCuda::Device("0000:17:00.0", "a"), FakeCuda::Device("0000:4a:00.0", "b")}}});
    std::string error;
    driver_ = CudaDriver::Load(kFakeCudaLibrary, &error);
    ASSERT_NE(driver_, nullptr) << error;
  }
  std::unique_ptr<FakeCuda> fake_;
  std::unique_ptr<CudaDriver> driver_;
};

TEST_F(DeviceMemoryTest, DeviceBufferRoundTripsThroughCopies) {
  std::string error;
  auto context = DeviceContext::Open(*driver_, 1, &error);
  ASSERT_NE(context, nullptr) << error;
  auto buffer = context->Allocate(MemoryType::kCuda, 4096, &error);
  ASSERT_NE(buffer, nullptr) << error;
  EXPECT_EQ(buffer->type(), MemoryType::kCuda);
  std::vector<std::uint8_t> out(1024), in(1024, 0);
  std::iota(out.begin(), out.end(), std::uint8_t{7});
  ASSERT_TRUE(context->CopyToDevice(*buffer, 512, out.data(), out.size(), &error)) << error;
  ASSERT_TRUE(context->CopyToHost(in.data(), *buffer, 512, in.size(), &error)) << error;
  EXPECT_EQ(in, out);
}

TEST_F(DeviceMemoryTest, CopiesOutsideTheBufferAreRefused) {
  std::string error;
  auto context = DeviceContext::Open(*driver_, 0, &error);
  ASSERT_NE(context, nullptr) << error;
  auto buffer = context->Allocate(MemoryType::kCuda, 1024, &error);
  ASSERT_NE(buffer, nullptr) << error;
  std::vector<std::uint8_t> host(1024);
  EXPECT_FALSE(context->CopyToHost(host.data(), *buffer, 1, 1024, &error));
  EXPECT_NE(error.find("outside"), std::string::npos) << error;
}

TEST_F(DeviceMemoryTest, PinnedHostBufferIsWritableFromTheHost) {
  std::string error;
  auto context = DeviceContext::Open(*driver_, 0, &error);
  ASSERT_NE(context, nullptr) << error;
  auto buffer = context->Allocate(MemoryType::kCudaHost, 256, &error);
  ASSERT_NE(buffer, nullptr) << error;
  EXPECT_EQ(buffer->type(), MemoryType::kCudaHost);
  static_cast<std::uint8_t*>(buffer->data())[255] = 42;
  std::uint8_t last = 0;
  ASSERT_TRUE(context->CopyToHost(&last, *buffer, 255, 1, &error)) << error;
  EXPECT_EQ(last, 42);
}

TEST_F(DeviceMemoryTest, BuffersAndContextsAreReleased) {
  {
    std::string error;
    auto context = DeviceContext::Open(*driver_, 0, &error);
    ASSERT_NE(context, nullptr) << error;
    auto device = context->Allocate(MemoryType::kCuda, 64, &error);
    auto pinned = context->Allocate(MemoryType::kCudaHost, 64, &error);
    ASSERT_NE(device, nullptr) << error;
    ASSERT_NE(pinned, nullptr) << error;
  }
  EXPECT_EQ(fake_->CallersOf("cuMemAlloc").size(), fake_->CallersOf("cuMemFree").size());
  EXPECT_EQ(fake_->CallersOf("cuMemHostAlloc").size(), 1u);
  EXPECT_EQ(fake_->CallersOf("cuMemFreeHost").size(), 1u);
  EXPECT_EQ(fake_->CallersOf("cuDevicePrimaryCtxRetain").size(), 1u);
  EXPECT_EQ(fake_->CallersOf("cuDevicePrimaryCtxRelease").size(), 1u);
}

TEST_F(DeviceMemoryTest, UnknownOrdinalIsAnError) {
  std::string error;
  EXPECT_EQ(DeviceContext::Open(*driver_, 5, &error), nullptr);
  EXPECT_EQ(error, "cuDeviceGet: CUDA_ERROR_INVALID_DEVICE (101)");
}

}  // namespace
}  // namespace rail::gpu
