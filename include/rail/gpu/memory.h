// Probe buffers by memory type: host (malloc'd, what probes always used), cuda (device memory on
// one GPU) and cuda_host (page-locked host memory from the driver, what UCX's cuda_copy stages
// through). RAII: every buffer frees itself, every context is released.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "rail/gpu/driver.h"

namespace rail::gpu {

enum class MemoryType { kHost, kCuda, kCudaHost };
const char* MemoryTypeName(MemoryType type);  // "host", "cuda", "cuda_host"
std::optional<MemoryType> ParseMemoryType(const std::string& name);

// A buffer probes move bytes from or into. For kCuda, data() is a device address (CUdeviceptr)
// that only the driver's copies and a CUDA-aware UCX may touch.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual MemoryType type() const = 0;
  virtual void* data() const = 0;
  virtual std::size_t size() const = 0;
};

// The primary context of one device, retained for as long as this lives, and made current on
// the calling thread by every call below.
class DeviceContext {
 public:
  static std::unique_ptr<DeviceContext> Open(const CudaDriver& driver, int ordinal,
                                             std::string* error);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  int ordinal() const { return ordinal_; }
  // cuMemAlloc (kCuda) or cuMemHostAlloc (kCudaHost); nullptr and `error` on failure.
  std::unique_ptr<Buffer> Allocate(MemoryType type, std::size_t bytes, std::string* error);
  // Synchronous copies between device memory and host memory (cuMemcpyDtoH / cuMemcpyHtoD).
  bool CopyToHost(void* host, const Buffer& device, std::size_t offset, std::size_t bytes,
                  std::string* error);
  bool CopyToDevice(const Buffer& device, std::size_t offset, const void* host, std::size_t bytes,
                    std::string* error);

 private:
  DeviceContext(const CudaDriver& driver, int ordinal, std::uintptr_t context);
  const CudaDriver& driver_;
  int ordinal_;
  std::uintptr_t context_;  // CUcontext
};

// A plain host buffer (kHost), page-aligned.
std::unique_ptr<Buffer> AllocateHost(std::size_t bytes);

}  // namespace rail::gpu
