// The worker's capabilities on the pipe (its hello) and on stdout (--capabilities), as JSON.
#include <cstdio>

#include "rail/probe/worker.h"

namespace rail::probe {
namespace {

using nlohmann::json;

json DeviceToJson(const gpu::CudaDevice& device) {
  return {{"ordinal", device.ordinal},
          {"pci_bus_id", device.pci_bus_id},
          {"name", device.name},
          {"integrated", device.integrated},
          {"gpu_direct_rdma", device.gpu_direct_rdma},
          {"dma_buf", device.dma_buf},
          {"gpu_direct_rdma_with_vmm", device.gpu_direct_rdma_with_vmm}};
}

gpu::CudaDevice DeviceFromJson(const json& in) {
  gpu::CudaDevice device;
  device.ordinal = in.value("ordinal", 0);
  device.pci_bus_id = in.value("pci_bus_id", "");
  device.name = in.value("name", "");
  device.integrated = in.value("integrated", false);
  device.gpu_direct_rdma = in.value("gpu_direct_rdma", false);
  device.dma_buf = in.value("dma_buf", false);
  device.gpu_direct_rdma_with_vmm = in.value("gpu_direct_rdma_with_vmm", false);
  return device;
}

// A field of the wrong type reads as missing: the worker is ours, but an older one may differ.
json Field(const json& in, const char* name, json::value_t type) {
  if (!in.is_object()) return nullptr;
  auto found = in.find(name);
  return found != in.end() && found->type() == type ? *found : json(nullptr);
}

gpu::DriverReport DriverFromJson(const json& in) {
  gpu::DriverReport report;
  if (!in.is_object()) return report;
  report.loaded = in.value("loaded", false);
  report.error = in.value("error", "");
  report.driver_version = in.value("driver_version", 0);
  json devices = Field(in, "devices", json::value_t::array);
  for (const json& device : devices.is_array() ? devices : json::array()) {
    if (device.is_object()) report.devices.push_back(DeviceFromJson(device));
  }
  return report;
}

}  // namespace

json CapabilitiesToJson(const WorkerCapabilities& capabilities) {
  json devices = json::array();
  for (const gpu::CudaDevice& device : capabilities.cuda.devices) {
    devices.push_back(DeviceToJson(device));
  }
  json dma_buf = json::array();
  for (const gpu::DmaBufSupport& nic : capabilities.dma_buf) {
    dma_buf.push_back(
        {{"device", nic.device}, {"supported", nic.supported}, {"detail", nic.detail}});
  }
  json out = {{"cuda",
               {{"loaded", capabilities.cuda.loaded},
                {"error", capabilities.cuda.error},
                {"driver_version", capabilities.cuda.driver_version},
                {"devices", devices}}},
              {"dma_buf", dma_buf}};
  if (capabilities.ucx_memory_types_known) out["ucx_memory_types"] = capabilities.ucx_memory_types;
  return out;
}

WorkerCapabilities CapabilitiesFromJson(const json& in) {
  WorkerCapabilities capabilities;
  capabilities.cuda = DriverFromJson(Field(in, "cuda", json::value_t::object));
  json dma_buf = Field(in, "dma_buf", json::value_t::array);
  for (const json& nic : dma_buf.is_array() ? dma_buf : json::array()) {
    if (!nic.is_object()) continue;
    capabilities.dma_buf.push_back(
        {nic.value("device", ""), nic.value("supported", false), nic.value("detail", "")});
  }
  json types = Field(in, "ucx_memory_types", json::value_t::array);
  if (types.is_array()) {
    capabilities.ucx_memory_types_known = true;
    for (const json& type : types) {
      if (type.is_string()) capabilities.ucx_memory_types.push_back(type.get<std::string>());
    }
  }
  return capabilities;
}

std::optional<WorkerCapabilities> QueryWorkerCapabilities(const std::string& executable,
                                                          std::string* error,
                                                          const std::string& cuda_library) {
  // Both paths come from our own flags or directory, never from a peer; the shell sees them
  // quoted.
  auto quote = [](const std::string& text) {
    std::string quoted = "'";
    for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
  };
  std::string command = quote(executable) + " --capabilities " +
                        quote("--cuda.library=" + cuda_library) + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *error = "cannot run " + executable;
    return std::nullopt;
  }
  std::string output;
  char chunk[4096];
  for (std::size_t n; (n = ::fread(chunk, 1, sizeof chunk, pipe)) > 0;) output.append(chunk, n);
  const int status = ::pclose(pipe);
  json parsed = json::parse(output, nullptr, false);
  if (status != 0 || parsed.is_discarded() || !parsed.is_object()) {
    *error = executable + " --capabilities failed (status " + std::to_string(status) + ")";
    return std::nullopt;
  }
  return CapabilitiesFromJson(parsed);
}

}  // namespace rail::probe
