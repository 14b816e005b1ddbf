#include "rail/gpu/driver.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "support/fake_cuda.h"

namespace rail::gpu {
namespace {

using testing::FakeCuda;
using testing::kFakeCudaLibrary;

#define REQUIRE_FAKE_CUDA() \
  if (kFakeCudaLibrary == nullptr) GTEST_SKIP() << testing::kNoFakeCuda

std::string Shell(const std::string& command) {
  std::string output;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::array<char, 4096> buffer{};
  while (pipe != nullptr && fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) {
    output += buffer.data();
  }
  return output;
}

TEST(CudaDriverTest, LoadsTheFakeDriverAndReadsItsVersion) {
  REQUIRE_FAKE_CUDA();
  FakeCuda fake(nlohmann::json{{"driver_version", 12040},
                               {"devices", {FakeCuda::Device("0000:17:00.0", "A")}}});
  std::string error;
  auto driver = CudaDriver::Load(kFakeCudaLibrary, &error);
  ASSERT_NE(driver, nullptr) << error;
  EXPECT_EQ(driver->DriverVersion(), 12040);
  EXPECT_EQ(fake.CallersOf("cuInit").size(), 1u);
}

TEST(CudaDriverTest, DriversBefore125ResolveThroughTheOldCuGetProcAddress) {
  REQUIRE_FAKE_CUDA();
  FakeCuda fake(nlohmann::json{{"driver_version", 12020},
                               {"devices", {FakeCuda::Device("0000:17:00.0", "old")}}});
  std::string error;
  auto driver = CudaDriver::Load(testing::kFakeCudaBefore125Library, &error);
  ASSERT_NE(driver, nullptr) << error;
  EXPECT_EQ(driver->DriverVersion(), 12020);
  EXPECT_EQ(driver->OrdinalOf("0000:17:00.0"), 0);
}

TEST(CudaDriverTest, MissingLibraryIsAnErrorNamingIt) {
  std::string error;
  auto driver = CudaDriver::Load("/nonexistent/libcuda.so.1", &error);
  EXPECT_EQ(driver, nullptr);
  if (kFakeCudaLibrary == nullptr) {
    // Built without the headers (the fake needs them too): no driver can load at all.
    EXPECT_EQ(error, "built without CUDA headers (/usr/local/cuda)");
  } else {
    EXPECT_NE(error.find("/nonexistent/libcuda.so.1"), std::string::npos) << error;
  }
}

TEST(CudaDriverTest, FailedInitIsAnErrorWithTheDriversName) {
  REQUIRE_FAKE_CUDA();
  FakeCuda fake(nlohmann::json{{"fail_init", true}, {"devices", nlohmann::json::array()}});
  std::string error;
  EXPECT_EQ(CudaDriver::Load(kFakeCudaLibrary, &error), nullptr);
  EXPECT_EQ(error, "cuInit: CUDA_ERROR_NO_DEVICE (100)");
}

TEST(CudaDriverTest, DevicesCarryTheirAttributesAndLowerCasePciAddresses) {
  REQUIRE_FAKE_CUDA();
  nlohmann::json spark = FakeCuda::Device("0000000F:01:00.0", "Fake GB10");
  spark["integrated"] = true;
  spark["gpu_direct_rdma"] = false;
  spark["dma_buf"] = false;
  spark["gpu_direct_rdma_with_vmm"] = false;
  FakeCuda fake(
      nlohmann::json{{"devices", {FakeCuda::Device("0000:AB:00.0", "Fake H100"), spark}}});
  std::string error;
  auto driver = CudaDriver::Load(kFakeCudaLibrary, &error);
  ASSERT_NE(driver, nullptr) << error;
  auto devices = driver->Devices(&error);
  ASSERT_EQ(devices.size(), 2u) << error;
  EXPECT_EQ(devices[0].pci_bus_id, "0000:ab:00.0");
  EXPECT_EQ(devices[0].name, "Fake H100");
  EXPECT_TRUE(devices[0].gpu_direct_rdma);
  EXPECT_TRUE(devices[0].dma_buf);
  EXPECT_TRUE(devices[0].gpu_direct_rdma_with_vmm);
  EXPECT_FALSE(devices[0].integrated);
  EXPECT_EQ(devices[1].pci_bus_id, "000f:01:00.0");
  EXPECT_EQ(devices[1].ordinal, 1);
  EXPECT_TRUE(devices[1].integrated);
  EXPECT_FALSE(devices[1].gpu_direct_rdma);
  EXPECT_FALSE(devices[1].dma_buf);
  EXPECT_FALSE(devices[1].gpu_direct_rdma_with_vmm);
}

TEST(CudaDriverTest, OrdinalOfMatchesPciAddressesNotOrder) {
  REQUIRE_FAKE_CUDA();
  // CUDA's order (fastest first) differs from PCI order here.
  FakeCuda fake(nlohmann::json{
      {"devices",
       {FakeCuda::Device("0000:c1:00.0", "third"), FakeCuda::Device("0000:17:00.0", "a"),
        FakeCuda::Device("0000:4a:00.0", "b")}}});
  std::string error;
  auto driver = CudaDriver::Load(kFakeCudaLibrary, &error);
  ASSERT_NE(driver, nullptr) << error;
  EXPECT_EQ(driver->OrdinalOf("0000:17:00.0"), 1);
  EXPECT_EQ(driver->OrdinalOf("0000:4A:00.0"), 2);
  EXPECT_EQ(driver->OrdinalOf("0000:c1:00.0"), 0);
  EXPECT_EQ(driver->OrdinalOf("0000:99:00.0"), std::nullopt);
}

TEST(CudaDriverTest, ReadDriverReportNeverFails) {
  DriverReport missing = ReadDriverReport("/nonexistent/libcuda.so.1");
  EXPECT_FALSE(missing.loaded);
  EXPECT_FALSE(missing.error.empty());
  EXPECT_TRUE(missing.devices.empty());
}

TEST(CudaDriverTest, ReadDriverReportListsTheDevices) {
  REQUIRE_FAKE_CUDA();
  FakeCuda fake(nlohmann::json{{"driver_version", 13000},
                               {"devices", {FakeCuda::Device("0000:17:00.0", "x")}}});
  DriverReport report = ReadDriverReport(kFakeCudaLibrary);
  EXPECT_TRUE(report.loaded) << report.error;
  EXPECT_EQ(report.driver_version, 13000);
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].name, "x");
}

TEST(CudaDriverTest, NoLinkTimeDependencyOnLibcuda) {
  // This binary links the gpu layer; the driver must come from dlopen only.
  std::string dynamic = Shell("readelf -d /proc/" + std::to_string(getpid()) + "/exe 2>&1");
  ASSERT_NE(dynamic.find("NEEDED"), std::string::npos) << "readelf answered: " << dynamic;
  EXPECT_EQ(dynamic.find("libcuda"), std::string::npos) << dynamic;
}

}  // namespace
}  // namespace rail::gpu
