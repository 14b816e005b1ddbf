// The CUDA driver, loaded at run time: dlopen("libcuda.so.1") and every entry point resolved by
// its versioned name through cuGetProcAddress, so that one binary serves hosts with and without
// GPUs and headers newer than the driver still work. No link-time dependency on CUDA.
//
// Only the probe worker process loads it: cuInit opens /dev/nvidia* and holds it, which blocks GPU
// resets, MIG changes and driver upgrades; the long-lived agent never does.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rail::gpu {

inline constexpr const char* kCudaLibrary = "libcuda.so.1";

// What the driver says about one device.
struct CudaDevice {
  int ordinal = 0;          // CUDA's ordinal (CUDA_VISIBLE_DEVICES and fastest-first applied)
  std::string pci_bus_id;   // cuDeviceGetPCIBusId, lower case as sysfs names it: "0000:17:00.0"
  std::string name;         // cuDeviceGetName
  bool integrated = false;  // CU_DEVICE_ATTRIBUTE_INTEGRATED
  bool gpu_direct_rdma = false;           // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED
  bool dma_buf = false;                   // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
  bool gpu_direct_rdma_with_vmm = false;  // ..._GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED
};

// The driver's answer as a whole: what the worker reports and `doctor` prints.
struct DriverReport {
  bool loaded = false;
  std::string error;       // why not loaded: "libcuda.so.1: cannot open shared object file", ...
  int driver_version = 0;  // cuDriverGetVersion: 12040 for 12.4
  std::vector<CudaDevice> devices;
};

struct Api;  // the resolved entry points (driver.cc)

class CudaDriver {
 public:
  // dlopen(library) (kCudaLibrary by default; tests name the fake's path), resolves the entry
  // points and calls cuInit(0). nullptr and `error` when any step fails.
  static std::unique_ptr<CudaDriver> Load(const std::string& library, std::string* error);
  ~CudaDriver();  // dlclose
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  int DriverVersion() const;
  // Every device the driver shows, with its attributes. Empty with `error` on failure.
  std::vector<CudaDevice> Devices(std::string* error) const;
  // The ordinal of the device at a PCI address, matched through cuDeviceGetPCIBusId (never by
  // order: CUDA's order is not PCI order).
  std::optional<int> OrdinalOf(const std::string& pci_bus_id) const;

  const Api& api() const { return *api_; }

 private:
  CudaDriver(void* handle, std::unique_ptr<Api> api);
  void* handle_;
  std::unique_ptr<Api> api_;
};

// Loads the driver and reads every device; never fails: a host without a GPU or driver answers
// loaded=false with the reason.
DriverReport ReadDriverReport(const std::string& library = kCudaLibrary);

}  // namespace rail::gpu
