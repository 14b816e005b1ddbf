// GPUDirect RDMA as NCCL and UCX decide it, both sides: the driver's attributes for the GPU, and
// the NIC's access to GPU memory, by peer memory (nv_mem / nvidia_peermem) or dma-buf (libibverbs
// ibv_reg_dmabuf_mr). Either mechanism is enough. The verdict is computed here once; the
// collector, the gpu_direct check and `doctor` all read it.
#pragma once

#include <string>
#include <vector>

#include "rail/gpu/driver.h"
#include "rail/inventory/pcie_topology.h"
#include "rail/sysfs/pci.h"

namespace rail::gpu {

// Whether a GPU is integrated: the topology calls it C2C-attached (from its PCI device id, no
// driver needed), or the driver's INTEGRATED attribute says so. Such GPUs have no GPUDirect RDMA
// and no PCIe path to a NIC; pinned host memory is their fast path. Either argument may be null
// (not in the tree; driver not loaded or GPU not visible to CUDA).
bool IsIntegrated(const inventory::Gpu* gpu, const CudaDevice* device);

enum class GpuDirectMechanism { kPeerMemory, kDmaBuf };
const char* GpuDirectMechanismName(GpuDirectMechanism mechanism);  // "peer_memory", "dma_buf"

// Whether an RDMA device registers dma-buf memory: ibv_reg_dmabuf_mr with an invalid fd answers
// EOPNOTSUPP or EPROTONOSUPPORT when the kernel or provider cannot, another error (EBADF) when it
// could (the probe NCCL runs).
struct DmaBufSupport {
  std::string device;  // RDMA device
  bool supported = false;
  std::string detail;  // the errno text, or why the probe could not run
};
std::vector<DmaBufSupport> ProbeDmaBuf(const std::vector<std::string>& devices);

// One GPU's GPUDirect RDMA, by mechanism.
struct GpuDirectVerdict {
  std::string pci_bus_id;
  bool peer_memory = false;  // driver GPU_DIRECT_RDMA_SUPPORTED and nv_mem or nvidia_peermem
  bool dma_buf = false;      // driver DMA_BUF_SUPPORTED and every probed NIC registers dma-buf
  std::string reason;        // why neither works, for people; "" when one does
  bool any() const { return peer_memory || dma_buf; }
};
GpuDirectVerdict JudgeGpuDirect(const CudaDevice& gpu, const sysfs::PeerMemoryState& peer_memory,
                                const std::vector<DmaBufSupport>& nics);

}  // namespace rail::gpu
