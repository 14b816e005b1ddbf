// The fake CUDA driver (CMakeLists.txt says why). Configuration, read at cuInit:
//   {"driver_version": 12040, "fail_init": false,
//    "devices": [{"pci_bus_id": "0000:17:00.0", "name": "Fake H100", "integrated": false,
//                 "gpu_direct_rdma": true, "dma_buf": true, "gpu_direct_rdma_with_vmm": true}]}
// No file: one such default device. Every call that initialises, retains or allocates appends
// "<pid> <call>" to RAIL_FAKE_CUDA_LOG.
#include <cuda.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

// The headers rename cuGetProcAddress to cuGetProcAddress_v2; drivers before 12.5 export the
// original four-argument one, which this driver exports too.
#undef cuGetProcAddress
extern "C" CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion,
                                     cuuint64_t flags);

namespace {

struct FakeDevice {
  std::string pci_bus_id = "0000:17:00.0";
  std::string name = "Fake H100";
  bool integrated = false;
  bool gpu_direct_rdma = true;
  bool dma_buf = true;
  bool gpu_direct_rdma_with_vmm = true;
  int context_marker = 0;  // its address is the device's primary CUcontext
  int retained = 0;
};

struct FakeState {
  std::mutex mutex;
  bool initialised = false;
  int driver_version = 12040;
  std::vector<FakeDevice> devices;
  std::set<void*> device_memory;
  std::set<void*> host_memory;
};

FakeState& State() {
  static FakeState* state = new FakeState;  // never destroyed: calls may come during exit
  return *state;
}

thread_local CUcontext current_context = nullptr;

void Log(const char* call) {
  const char* path = std::getenv("RAIL_FAKE_CUDA_LOG");
  if (path == nullptr || *path == '\0') return;
  std::ofstream(path, std::ios::app) << getpid() << ' ' << call << '\n';
}

FakeDevice DeviceFromJson(const nlohmann::json& json) {
  FakeDevice device;
  device.pci_bus_id = json.value("pci_bus_id", device.pci_bus_id);
  device.name = json.value("name", device.name);
  device.integrated = json.value("integrated", device.integrated);
  device.gpu_direct_rdma = json.value("gpu_direct_rdma", device.gpu_direct_rdma);
  device.dma_buf = json.value("dma_buf", device.dma_buf);
  device.gpu_direct_rdma_with_vmm =
      json.value("gpu_direct_rdma_with_vmm", device.gpu_direct_rdma_with_vmm);
  return device;
}

// false when the configuration asks cuInit to fail (or cannot be read).
bool Configure(FakeState& state) {
  const char* path = std::getenv("RAIL_FAKE_CUDA_CONFIG");
  if (path == nullptr || *path == '\0') {
    state.devices = {FakeDevice{}};
    return true;
  }
  std::ifstream file(path);
  nlohmann::json config = nlohmann::json::parse(file, nullptr, false);
  if (config.is_discarded() || !config.is_object()) return false;
  state.driver_version = config.value("driver_version", state.driver_version);
  state.devices.clear();
  for (const nlohmann::json& device : config.value("devices", nlohmann::json::array())) {
    state.devices.push_back(DeviceFromJson(device));
  }
  return !config.value("fail_init", false);
}

FakeDevice* DeviceAt(FakeState& state, CUdevice device) {
  if (!state.initialised || device < 0 || device >= static_cast<int>(state.devices.size())) {
    return nullptr;
  }
  return &state.devices[static_cast<std::size_t>(device)];
}

CUresult CopyString(const std::string& text, char* out, int length) {
  if (out == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::size_t n = std::min(text.size(), static_cast<std::size_t>(length - 1));
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  return CUDA_SUCCESS;
}

const std::map<std::string, void*>& EntryPoints();

}  // namespace

extern "C" {

CUresult cuInit(unsigned int flags) {
  Log("cuInit");
  FakeState& state = State();
  std::lock_guard lock(state.mutex);
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  state.initialised = Configure(state);
  return state.initialised ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = State().driver_version;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  FakeState& state = State();
  if (!state.initialised) return CUDA_ERROR_NOT_INITIALIZED;
  *count = static_cast<int>(state.devices.size());
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (DeviceAt(State(), ordinal) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  FakeDevice* fake = DeviceAt(State(), device);
  return fake == nullptr ? CUDA_ERROR_INVALID_DEVICE : CopyString(fake->name, name, length);
}

CUresult cuDeviceGetPCIBusId(char* bus_id, int length, CUdevice device) {
  FakeDevice* fake = DeviceAt(State(), device);
  return fake == nullptr ? CUDA_ERROR_INVALID_DEVICE : CopyString(fake->pci_bus_id, bus_id, length);
}

CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  FakeDevice* fake = DeviceAt(State(), device);
  if (fake == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_INTEGRATED:
      *value = fake->integrated;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
      *value = fake->gpu_direct_rdma;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
      *value = fake->dma_buf;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
      *value = fake->gpu_direct_rdma_with_vmm;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  Log("cuDevicePrimaryCtxRetain");
  FakeState& state = State();
  std::lock_guard lock(state.mutex);
  FakeDevice* fake = DeviceAt(state, device);
  if (fake == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  ++fake->retained;
  *context = reinterpret_cast<CUcontext>(&fake->context_marker);
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  Log("cuDevicePrimaryCtxRelease");
  FakeState& state = State();
  std::lock_guard lock(state.mutex);
  FakeDevice* fake = DeviceAt(state, device);
  if (fake == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (fake->retained == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --fake->retained;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext context) {
  current_context = context;
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr* pointer, size_t bytes) {
  Log("cuMemAlloc");
  FakeState& state = State();
  std::lock_guard lock(state.mutex);
  if (current_context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  void* memory = std::malloc(bytes == 0 ? 1 : bytes);
  if (memory == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  state.device_memory.insert(memory);
  *pointer = reinterpret_cast<CUdeviceptr>(memory);
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr pointer) {
  Log("cuMemFree");
  FakeState& state = State();
  std::lock_guard lock(state.mutex);
  void* memory = reinterpret_cast<void*>(pointer);
  if (state.device_memory.erase(memory) == 0) return CUDA_ERROR_INVALID_VALUE;
  std::free(memory);
  return CUDA_SUCCESS;
}

CUresult cuMemHostAlloc(void** pointer, size_t bytes, unsigned int) {
  Log("cuMemHostAlloc");
  FakeState& state = State();
  std::lock_guard lock(state.mutex);
  if (current_context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  void* memory = std::malloc(bytes == 0 ? 1 : bytes);
  if (memory == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  state.host_memory.insert(memory);
  *pointer = memory;
  return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void* pointer) {
  Log("cuMemFreeHost");
  FakeState& state = State();
  std::lock_guard lock(state.mutex);
  if (state.host_memory.erase(pointer) == 0) return CUDA_ERROR_INVALID_VALUE;
  std::free(pointer);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void* host, CUdeviceptr device, size_t bytes) {
  std::memcpy(host, reinterpret_cast<const void*>(device), bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr device, const void* host, size_t bytes) {
  std::memcpy(reinterpret_cast<void*>(device), host, bytes);
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char** name) {
  switch (error) {
    case CUDA_SUCCESS:
      *name = "CUDA_SUCCESS";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      *name = "CUDA_ERROR_INVALID_VALUE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *name = "CUDA_ERROR_OUT_OF_MEMORY";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_INITIALIZED:
      *name = "CUDA_ERROR_NOT_INITIALIZED";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE:
      *name = "CUDA_ERROR_NO_DEVICE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_DEVICE:
      *name = "CUDA_ERROR_INVALID_DEVICE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_CONTEXT:
      *name = "CUDA_ERROR_INVALID_CONTEXT";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_FOUND:
      *name = "CUDA_ERROR_NOT_FOUND";
      return CUDA_SUCCESS;
    default:
      *name = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  return cuGetErrorName(error, text);
}

}  // extern "C"

namespace {

CUresult GetProcAddress(const char* symbol, void** pfn, CUdriverProcAddressQueryResult* status) {
  auto found = EntryPoints().find(symbol == nullptr ? "" : symbol);
  bool known = found != EntryPoints().end();
  if (status != nullptr) {
    *status = known ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  }
  *pfn = known ? found->second : nullptr;
  return known ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

}  // namespace

extern "C" {

#ifndef RAIL_FAKE_CUDA_BEFORE_12_5
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int, cuuint64_t,
                             CUdriverProcAddressQueryResult* status) {
  return GetProcAddress(symbol, pfn, status);
}
#endif

CUresult cuGetProcAddress(const char* symbol, void** pfn, int, cuuint64_t) {
  return GetProcAddress(symbol, pfn, nullptr);
}

}  // extern "C"

namespace {

template <typename Fn>
void* Address(Fn fn) {
  void* address = nullptr;
  std::memcpy(&address, &fn, sizeof fn);
  return address;
}

// By base name, as the real driver answers cuGetProcAddress.
const std::map<std::string, void*>& EntryPoints() {
  static const std::map<std::string, void*> entry_points = {
      {"cuInit", Address(&cuInit)},
      {"cuDriverGetVersion", Address(&cuDriverGetVersion)},
      {"cuDeviceGetCount", Address(&cuDeviceGetCount)},
      {"cuDeviceGet", Address(&cuDeviceGet)},
      {"cuDeviceGetName", Address(&cuDeviceGetName)},
      {"cuDeviceGetPCIBusId", Address(&cuDeviceGetPCIBusId)},
      {"cuDeviceGetAttribute", Address(&cuDeviceGetAttribute)},
      {"cuDevicePrimaryCtxRetain", Address(&cuDevicePrimaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease", Address(&cuDevicePrimaryCtxRelease_v2)},
      {"cuCtxSetCurrent", Address(&cuCtxSetCurrent)},
      {"cuMemAlloc", Address(&cuMemAlloc_v2)},
      {"cuMemFree", Address(&cuMemFree_v2)},
      {"cuMemHostAlloc", Address(&cuMemHostAlloc)},
      {"cuMemFreeHost", Address(&cuMemFreeHost)},
      {"cuMemcpyDtoH", Address(&cuMemcpyDtoH_v2)},
      {"cuMemcpyHtoD", Address(&cuMemcpyHtoD_v2)},
      {"cuGetErrorName", Address(&cuGetErrorName)},
      {"cuGetErrorString", Address(&cuGetErrorString)},
#ifndef RAIL_FAKE_CUDA_BEFORE_12_5
      {"cuGetProcAddress", Address(&cuGetProcAddress_v2)},
#else
      {"cuGetProcAddress", Address(&cuGetProcAddress)},
#endif
  };
  return entry_points;
}

}  // namespace
