#include "rail/gpu/memory.h"

#include <cstdlib>
#include <cstring>

#include "gpu/api.h"

namespace rail::gpu {

namespace {

constexpr std::size_t kPageSize = 4096;

class HostBuffer : public Buffer {
 public:
  HostBuffer(void* data, std::size_t size) : data_(data), size_(size) {}
  ~HostBuffer() override { std::free(data_); }
  MemoryType type() const override { return MemoryType::kHost; }
  void* data() const override { return data_; }
  std::size_t size() const override { return size_; }

 private:
  void* data_;
  std::size_t size_;
};

}  // namespace

std::unique_ptr<Buffer> AllocateHost(std::size_t bytes) {
  // aligned_alloc wants a multiple of the alignment; a zero-byte buffer still gets a page.
  std::size_t rounded = (bytes + kPageSize - 1) / kPageSize * kPageSize;
  void* data = std::aligned_alloc(kPageSize, rounded == 0 ? kPageSize : rounded);
  if (data == nullptr) return nullptr;
  return std::make_unique<HostBuffer>(data, bytes);
}

#ifndef RAIL_HAVE_CUDA_HEADERS

DeviceContext::DeviceContext(const CudaDriver& driver, int ordinal, std::uintptr_t context)
    : driver_(driver), ordinal_(ordinal), context_(context) {}
DeviceContext::~DeviceContext() = default;
std::unique_ptr<DeviceContext> DeviceContext::Open(const CudaDriver&, int, std::string* error) {
  *error = kNoCudaHeaders;
  return nullptr;
}
std::unique_ptr<Buffer> DeviceContext::Allocate(MemoryType type, std::size_t bytes,
                                                std::string* error) {
  if (type == MemoryType::kHost) return AllocateHost(bytes);
  *error = kNoCudaHeaders;
  return nullptr;
}
bool DeviceContext::CopyToHost(void*, const Buffer&, std::size_t, std::size_t, std::string* error) {
  *error = kNoCudaHeaders;
  return false;
}
bool DeviceContext::CopyToDevice(const Buffer&, std::size_t, const void*, std::size_t,
                                 std::string* error) {
  *error = kNoCudaHeaders;
  return false;
}

#else

namespace {

// Whether [offset, offset + bytes) lies inside the buffer.
bool InRange(const Buffer& buffer, std::size_t offset, std::size_t bytes, std::string* error) {
  if (offset <= buffer.size() && bytes <= buffer.size() - offset) return true;
  *error = "copy of " + std::to_string(bytes) + " bytes at " + std::to_string(offset) +
           " outside a buffer of " + std::to_string(buffer.size());
  return false;
}

CUcontext AsContext(std::uintptr_t context) {
  return reinterpret_cast<CUcontext>(context);
}

// Device memory (cuMemAlloc) or page-locked host memory (cuMemHostAlloc), freed by the driver
// with the context it came from made current. It must not outlive its DeviceContext.
class DriverBuffer : public Buffer {
 public:
  DriverBuffer(const Api& api, CUcontext context, MemoryType type, void* data, std::size_t size)
      : api_(api), context_(context), type_(type), data_(data), size_(size) {}
  ~DriverBuffer() override {
    api_.CtxSetCurrent(context_);
    if (type_ == MemoryType::kCuda) {
      api_.MemFree(static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(data_)));
    } else {
      api_.MemFreeHost(data_);
    }
  }
  MemoryType type() const override { return type_; }
  void* data() const override { return data_; }
  std::size_t size() const override { return size_; }

 private:
  const Api& api_;
  CUcontext context_;
  MemoryType type_;
  void* data_;
  std::size_t size_;
};

CUdeviceptr DevicePointer(const Buffer& buffer, std::size_t offset) {
  return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(buffer.data()) + offset);
}

}  // namespace

DeviceContext::DeviceContext(const CudaDriver& driver, int ordinal, std::uintptr_t context)
    : driver_(driver), ordinal_(ordinal), context_(context) {}

std::unique_ptr<DeviceContext> DeviceContext::Open(const CudaDriver& driver, int ordinal,
                                                   std::string* error) {
  const Api& api = driver.api();
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUresult result = api.DeviceGet(&device, ordinal);
  if (result != CUDA_SUCCESS) {
    *error = ErrorText(api, result, "cuDeviceGet");
    return nullptr;
  }
  result = api.DevicePrimaryCtxRetain(&context, device);
  if (result != CUDA_SUCCESS) {
    *error = ErrorText(api, result, "cuDevicePrimaryCtxRetain");
    return nullptr;
  }
  return std::unique_ptr<DeviceContext>(
      new DeviceContext(driver, ordinal, reinterpret_cast<std::uintptr_t>(context)));
}

DeviceContext::~DeviceContext() {
  const Api& api = driver_.api();
  CUdevice device = 0;
  if (api.DeviceGet(&device, ordinal_) == CUDA_SUCCESS) api.DevicePrimaryCtxRelease(device);
}

std::unique_ptr<Buffer> DeviceContext::Allocate(MemoryType type, std::size_t bytes,
                                                std::string* error) {
  if (type == MemoryType::kHost) return AllocateHost(bytes);
  const Api& api = driver_.api();
  CUresult result = api.CtxSetCurrent(AsContext(context_));
  void* data = nullptr;
  if (result == CUDA_SUCCESS && type == MemoryType::kCuda) {
    CUdeviceptr device_pointer = 0;
    result = api.MemAlloc(&device_pointer, bytes);
    data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(device_pointer));
  } else if (result == CUDA_SUCCESS) {
    result = api.MemHostAlloc(&data, bytes, 0);
  }
  if (result != CUDA_SUCCESS) {
    *error = ErrorText(api, result, type == MemoryType::kCuda ? "cuMemAlloc" : "cuMemHostAlloc");
    return nullptr;
  }
  return std::make_unique<DriverBuffer>(api, AsContext(context_), type, data, bytes);
}

bool DeviceContext::CopyToHost(void* host, const Buffer& device, std::size_t offset,
                               std::size_t bytes, std::string* error) {
  if (!InRange(device, offset, bytes, error)) return false;
  if (device.type() != MemoryType::kCuda) {
    std::memcpy(host, static_cast<const char*>(device.data()) + offset, bytes);
    return true;
  }
  const Api& api = driver_.api();
  CUresult result = api.CtxSetCurrent(AsContext(context_));
  if (result == CUDA_SUCCESS) result = api.MemcpyDtoH(host, DevicePointer(device, offset), bytes);
  if (result == CUDA_SUCCESS) return true;
  *error = ErrorText(api, result, "cuMemcpyDtoH");
  return false;
}

bool DeviceContext::CopyToDevice(const Buffer& device, std::size_t offset, const void* host,
                                 std::size_t bytes, std::string* error) {
  if (!InRange(device, offset, bytes, error)) return false;
  if (device.type() != MemoryType::kCuda) {
    std::memcpy(static_cast<char*>(device.data()) + offset, host, bytes);
    return true;
  }
  const Api& api = driver_.api();
  CUresult result = api.CtxSetCurrent(AsContext(context_));
  if (result == CUDA_SUCCESS) result = api.MemcpyHtoD(DevicePointer(device, offset), host, bytes);
  if (result == CUDA_SUCCESS) return true;
  *error = ErrorText(api, result, "cuMemcpyHtoD");
  return false;
}

#endif

}  // namespace rail::gpu
