// The driver entry points CudaDriver resolved, typed from the CUDA headers (the macros there name
// the versioned symbols: cuMemAlloc is cuMemAlloc_v2), shared by driver.cc and memory.cc. Built
// without the headers, the gpu layer has no entry points and CudaDriver::Load says so.
#pragma once

#include <string>

#ifdef RAIL_HAVE_CUDA_HEADERS
#include <cuda.h>
#endif

namespace rail::gpu {

#ifdef RAIL_HAVE_CUDA_HEADERS
struct Api {
  decltype(&::cuInit) Init = nullptr;
  decltype(&::cuDriverGetVersion) DriverGetVersion = nullptr;
  decltype(&::cuDeviceGetCount) DeviceGetCount = nullptr;
  decltype(&::cuDeviceGet) DeviceGet = nullptr;
  decltype(&::cuDeviceGetName) DeviceGetName = nullptr;
  decltype(&::cuDeviceGetPCIBusId) DeviceGetPCIBusId = nullptr;
  decltype(&::cuDeviceGetAttribute) DeviceGetAttribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) DevicePrimaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) DevicePrimaryCtxRelease = nullptr;
  decltype(&::cuCtxSetCurrent) CtxSetCurrent = nullptr;
  decltype(&::cuMemAlloc) MemAlloc = nullptr;
  decltype(&::cuMemFree) MemFree = nullptr;
  decltype(&::cuMemHostAlloc) MemHostAlloc = nullptr;
  decltype(&::cuMemFreeHost) MemFreeHost = nullptr;
  decltype(&::cuMemcpyDtoH) MemcpyDtoH = nullptr;
  decltype(&::cuMemcpyHtoD) MemcpyHtoD = nullptr;
  decltype(&::cuGetErrorName) GetErrorName = nullptr;
};

// "cuInit: CUDA_ERROR_NO_DEVICE (100)": the call and the driver's name for the result.
std::string ErrorText(const Api& api, CUresult result, const char* call);
#else
struct Api {};
#endif

// What CudaDriver::Load answers when the layer was built without the headers.
inline constexpr const char* kNoCudaHeaders = "built without CUDA headers (/usr/local/cuda)";

}  // namespace rail::gpu
