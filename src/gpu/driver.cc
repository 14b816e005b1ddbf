#include "rail/gpu/driver.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "gpu/api.h"

namespace rail::gpu {

CudaDriver::CudaDriver(void* handle, std::unique_ptr<Api> api)
    : handle_(handle), api_(std::move(api)) {}

CudaDriver::~CudaDriver() {
  api_.reset();
  if (handle_ != nullptr) dlclose(handle_);
}

DriverReport ReadDriverReport(const std::string& library) {
  DriverReport report;
  std::unique_ptr<CudaDriver> driver = CudaDriver::Load(library, &report.error);
  if (driver == nullptr) return report;
  report.loaded = true;
  report.driver_version = driver->DriverVersion();
  report.devices = driver->Devices(&report.error);
  return report;
}

#ifndef RAIL_HAVE_CUDA_HEADERS

std::unique_ptr<CudaDriver> CudaDriver::Load(const std::string&, std::string* error) {
  *error = kNoCudaHeaders;
  return nullptr;
}
int CudaDriver::DriverVersion() const {
  return 0;
}
std::vector<CudaDevice> CudaDriver::Devices(std::string* error) const {
  *error = kNoCudaHeaders;
  return {};
}
std::optional<int> CudaDriver::OrdinalOf(const std::string&) const {
  return std::nullopt;
}

#else

namespace {

// cuGetProcAddress before CUDA 12.5 (no query result) and since (cuGetProcAddress_v2).
using GetProcAddressV1 = CUresult (*)(const char*, void**, int, cuuint64_t);
using GetProcAddressV2 = CUresult (*)(const char*, void**, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult*);

struct DlClose {
  void operator()(void* handle) const { dlclose(handle); }
};
using LibraryHandle = std::unique_ptr<void, DlClose>;

template <typename Fn>
Fn LoadSymbol(void* handle, const char* name) {
  void* symbol = dlsym(handle, name);
  Fn fn = nullptr;
  std::memcpy(&fn, &symbol, sizeof fn);
  return fn;
}

// Every entry point but cuGetProcAddress itself is asked for by its base name and the version of
// the headers this was built with, as NVIDIA documents: the driver answers the matching versioned
// symbol, or the newest it has when it is older than the headers.
class ProcLookup {
 public:
  explicit ProcLookup(void* handle)
      : v2_(LoadSymbol<GetProcAddressV2>(handle, "cuGetProcAddress_v2")),
        v1_(v2_ != nullptr ? nullptr : LoadSymbol<GetProcAddressV1>(handle, "cuGetProcAddress")) {}
  bool usable() const { return v2_ != nullptr || v1_ != nullptr; }

  template <typename Fn>
  bool Resolve(const char* name, Fn& slot, std::string* error) const {
    void* pfn = nullptr;
    CUresult result = CUDA_ERROR_NOT_FOUND;
    if (v2_ != nullptr) {
      CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      result = v2_(name, &pfn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    } else {
      result = v1_(name, &pfn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT);
    }
    if (result != CUDA_SUCCESS || pfn == nullptr) {
      *error = std::string("the CUDA driver has no ") + name + " (cuGetProcAddress answered " +
               std::to_string(static_cast<int>(result)) + ")";
      return false;
    }
    std::memcpy(&slot, &pfn, sizeof slot);
    return true;
  }

 private:
  GetProcAddressV2 v2_;
  GetProcAddressV1 v1_;
};

bool ResolveAll(const ProcLookup& lookup, Api& api, std::string* error) {
  return lookup.Resolve("cuGetErrorName", api.GetErrorName, error) &&
         lookup.Resolve("cuInit", api.Init, error) &&
         lookup.Resolve("cuDriverGetVersion", api.DriverGetVersion, error) &&
         lookup.Resolve("cuDeviceGetCount", api.DeviceGetCount, error) &&
         lookup.Resolve("cuDeviceGet", api.DeviceGet, error) &&
         lookup.Resolve("cuDeviceGetName", api.DeviceGetName, error) &&
         lookup.Resolve("cuDeviceGetPCIBusId", api.DeviceGetPCIBusId, error) &&
         lookup.Resolve("cuDeviceGetAttribute", api.DeviceGetAttribute, error) &&
         lookup.Resolve("cuDevicePrimaryCtxRetain", api.DevicePrimaryCtxRetain, error) &&
         lookup.Resolve("cuDevicePrimaryCtxRelease", api.DevicePrimaryCtxRelease, error) &&
         lookup.Resolve("cuCtxSetCurrent", api.CtxSetCurrent, error) &&
         lookup.Resolve("cuMemAlloc", api.MemAlloc, error) &&
         lookup.Resolve("cuMemFree", api.MemFree, error) &&
         lookup.Resolve("cuMemHostAlloc", api.MemHostAlloc, error) &&
         lookup.Resolve("cuMemFreeHost", api.MemFreeHost, error) &&
         lookup.Resolve("cuMemcpyDtoH", api.MemcpyDtoH, error) &&
         lookup.Resolve("cuMemcpyHtoD", api.MemcpyHtoD, error);
}

// sysfs names PCI functions in lower case with a 4-digit domain ("0000:17:00.0"); the driver
// may answer upper case and a longer domain ("00000000:17:00.0").
std::string NormalizePciBusId(std::string id) {
  std::transform(id.begin(), id.end(), id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::size_t colon = id.find(':');
  if (colon == std::string::npos) return id;
  std::string domain = id.substr(0, colon);
  while (domain.size() > 4 && domain.front() == '0') domain.erase(0, 1);
  while (domain.size() < 4) domain.insert(0, "0");
  return domain + id.substr(colon);
}

bool Attribute(const Api& api, CUdevice device, CUdevice_attribute attribute) {
  int value = 0;
  // A driver older than an attribute answers CUDA_ERROR_INVALID_VALUE: not supported.
  return api.DeviceGetAttribute(&value, attribute, device) == CUDA_SUCCESS && value != 0;
}

bool ReadDevice(const Api& api, int ordinal, CudaDevice* out, std::string* error) {
  CUdevice device = 0;
  CUresult result = api.DeviceGet(&device, ordinal);
  if (result != CUDA_SUCCESS) {
    *error = ErrorText(api, result, "cuDeviceGet");
    return false;
  }
  char name[256] = {};
  char bus_id[64] = {};
  result = api.DeviceGetName(name, sizeof name - 1, device);
  if (result == CUDA_SUCCESS) result = api.DeviceGetPCIBusId(bus_id, sizeof bus_id - 1, device);
  if (result != CUDA_SUCCESS) {
    *error = ErrorText(api, result, "cuDeviceGetName/cuDeviceGetPCIBusId");
    return false;
  }
  out->ordinal = ordinal;
  out->name = name;
  out->pci_bus_id = NormalizePciBusId(bus_id);
  out->integrated = Attribute(api, device, CU_DEVICE_ATTRIBUTE_INTEGRATED);
  out->gpu_direct_rdma = Attribute(api, device, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED);
  out->dma_buf = Attribute(api, device, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED);
  out->gpu_direct_rdma_with_vmm =
      Attribute(api, device, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED);
  return true;
}

}  // namespace

std::string ErrorText(const Api& api, CUresult result, const char* call) {
  const char* name = nullptr;
  if (api.GetErrorName == nullptr || api.GetErrorName(result, &name) != CUDA_SUCCESS ||
      name == nullptr) {
    name = "CUDA_ERROR_UNKNOWN";
  }
  return std::string(call) + ": " + name + " (" + std::to_string(static_cast<int>(result)) + ")";
}

std::unique_ptr<CudaDriver> CudaDriver::Load(const std::string& library, std::string* error) {
  dlerror();
  LibraryHandle handle(dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (handle == nullptr) {
    const char* why = dlerror();
    *error = why != nullptr ? why : library + ": cannot be loaded";
    return nullptr;
  }
  ProcLookup lookup(handle.get());
  if (!lookup.usable()) {
    *error = library + ": no cuGetProcAddress (a CUDA driver older than 11.3?)";
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  if (!ResolveAll(lookup, *api, error)) return nullptr;
  CUresult result = api->Init(0);
  if (result != CUDA_SUCCESS) {
    *error = ErrorText(*api, result, "cuInit");
    return nullptr;
  }
  return std::unique_ptr<CudaDriver>(new CudaDriver(handle.release(), std::move(api)));
}

int CudaDriver::DriverVersion() const {
  int version = 0;
  if (api_->DriverGetVersion(&version) != CUDA_SUCCESS) return 0;
  return version;
}

std::vector<CudaDevice> CudaDriver::Devices(std::string* error) const {
  int count = 0;
  CUresult result = api_->DeviceGetCount(&count);
  if (result != CUDA_SUCCESS) {
    *error = ErrorText(*api_, result, "cuDeviceGetCount");
    return {};
  }
  std::vector<CudaDevice> devices(static_cast<std::size_t>(count));
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    if (!ReadDevice(*api_, ordinal, &devices[static_cast<std::size_t>(ordinal)], error)) return {};
  }
  return devices;
}

std::optional<int> CudaDriver::OrdinalOf(const std::string& pci_bus_id) const {
  std::string error;
  std::string wanted = NormalizePciBusId(pci_bus_id);
  for (const CudaDevice& device : Devices(&error)) {
    if (device.pci_bus_id == wanted) return device.ordinal;
  }
  return std::nullopt;
}

#endif

}  // namespace rail::gpu
