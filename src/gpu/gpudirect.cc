#include "rail/gpu/gpudirect.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace rail::gpu {

namespace {

struct FreeDeviceList {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};
struct CloseDevice {
  void operator()(ibv_context* context) const { ibv_close_device(context); }
};
struct DeallocPd {
  void operator()(ibv_pd* pd) const { ibv_dealloc_pd(pd); }
};
using DeviceList = std::unique_ptr<ibv_device*, FreeDeviceList>;
using DeviceHandle = std::unique_ptr<ibv_context, CloseDevice>;
using PdHandle = std::unique_ptr<ibv_pd, DeallocPd>;

ibv_device* FindDevice(ibv_device** list, const std::string& name) {
  for (ibv_device** device = list; device != nullptr && *device != nullptr; ++device) {
    if (name == ibv_get_device_name(*device)) return *device;
  }
  return nullptr;
}

std::string ErrnoText(int error) {
  return std::strerror(error);
}

// Registers dma-buf fd -1: a kernel and provider that can import dma-bufs reject the fd (EBADF);
// one that cannot answers EOPNOTSUPP (or EPROTONOSUPPORT) before looking at it.
DmaBufSupport ProbeDevice(ibv_device* device, const std::string& name) {
  DmaBufSupport support{name, false, ""};
  DeviceHandle context(ibv_open_device(device));
  if (context == nullptr) {
    support.detail = "ibv_open_device: " + ErrnoText(errno);
    return support;
  }
  PdHandle pd(ibv_alloc_pd(context.get()));
  if (pd == nullptr) {
    support.detail = "ibv_alloc_pd: " + ErrnoText(errno);
    return support;
  }
  errno = 0;
  ibv_mr* mr = ibv_reg_dmabuf_mr(pd.get(), 0, 4096, 0, -1, IBV_ACCESS_LOCAL_WRITE);
  int error = errno;
  if (mr != nullptr) {
    ibv_dereg_mr(mr);
    support.supported = true;
    support.detail = "registered";
    return support;
  }
  support.supported = error != EOPNOTSUPP && error != EPROTONOSUPPORT;
  support.detail = ErrnoText(error);
  return support;
}

// "mlx5_0 (Operation not supported), mlx5_1 (no such RDMA device)"
std::string UnsupportedNics(const std::vector<DmaBufSupport>& nics) {
  std::string text;
  for (const DmaBufSupport& nic : nics) {
    if (nic.supported) continue;
    if (!text.empty()) text += ", ";
    text += nic.device + " (" + nic.detail + ")";
  }
  return text;
}

std::string PeerMemoryMissing(const CudaDevice& gpu) {
  if (!gpu.gpu_direct_rdma) return "no peer memory (the driver reports no GPUDirect RDMA)";
  return "no peer memory (nvidia_peermem not loaded, no nv_mem)";
}

std::string DmaBufMissing(const CudaDevice& gpu, const std::vector<DmaBufSupport>& nics) {
  if (!gpu.dma_buf) return "no dma-buf (the driver reports no dma-buf support)";
  if (nics.empty()) return "no dma-buf (no RDMA device probed)";
  return "dma-buf unsupported by " + UnsupportedNics(nics);
}

}  // namespace

bool IsIntegrated(const inventory::Gpu* gpu, const CudaDevice* device) {
  return (gpu != nullptr && gpu->attach == inventory::GpuAttach::kC2c) ||
         (device != nullptr && device->integrated);
}

const char* GpuDirectMechanismName(GpuDirectMechanism mechanism) {
  switch (mechanism) {
    case GpuDirectMechanism::kPeerMemory:
      return "peer_memory";
    case GpuDirectMechanism::kDmaBuf:
      return "dma_buf";
  }
  return "peer_memory";
}

std::vector<DmaBufSupport> ProbeDmaBuf(const std::vector<std::string>& devices) {
  std::vector<DmaBufSupport> results;
  if (devices.empty()) return results;
  int count = 0;
  DeviceList list(ibv_get_device_list(&count));
  for (const std::string& name : devices) {
    ibv_device* device = list == nullptr ? nullptr : FindDevice(list.get(), name);
    if (device == nullptr) {
      results.push_back({name, false, "no such RDMA device"});
      continue;
    }
    results.push_back(ProbeDevice(device, name));
  }
  return results;
}

GpuDirectVerdict JudgeGpuDirect(const CudaDevice& gpu, const sysfs::PeerMemoryState& peer_memory,
                                const std::vector<DmaBufSupport>& nics) {
  GpuDirectVerdict verdict;
  verdict.pci_bus_id = gpu.pci_bus_id;
  verdict.peer_memory = gpu.gpu_direct_rdma && (peer_memory.nv_mem_version.has_value() ||
                                                peer_memory.nvidia_peermem_loaded);
  bool every_nic = !nics.empty();
  for (const DmaBufSupport& nic : nics) every_nic = every_nic && nic.supported;
  verdict.dma_buf = gpu.dma_buf && every_nic;
  if (verdict.any()) return verdict;
  verdict.reason = PeerMemoryMissing(gpu) + " and " + DmaBufMissing(gpu, nics);
  if (gpu.integrated) verdict.reason = "integrated GPU: " + verdict.reason;
  return verdict;
}

}  // namespace rail::gpu
