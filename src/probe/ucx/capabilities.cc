// The worker's capabilities: the CUDA driver (loaded here, in the worker, never in the agent),
// the NICs' dma-buf registration, and the memory types this UCX was built for.
#include <spdlog/spdlog.h>
#include <ucp/api/ucp.h>
#include <ucs/memory/memory_type.h>

#include "probe/ucx/context.h"
#include "rail/probe/in_process.h"
#include "rail/sysfs/filesystem.h"

namespace rail::probe {
namespace {

// ucp_context_query's memory types by their UCS names ("host", "cuda", "cuda-managed", ...);
// false when no context could be made.
bool UcxMemoryTypes(std::vector<std::string>* names) {
  std::string reason;
  std::string message;
  UcxContext context = detail::CreateUcxContext(UcxContextSpec{}, &reason, &message);
  if (!context) {
    spdlog::warn("capabilities: no UCX context for its memory types: {}", message);
    return false;
  }
  ucp_context_attr_t attributes{};
  attributes.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  if (ucp_context_query(context.get(), &attributes) != UCS_OK) return false;
  for (int type = UCS_MEMORY_TYPE_HOST; type < UCS_MEMORY_TYPE_LAST; ++type) {
    if (attributes.memory_types & (std::uint64_t{1} << type)) {
      names->push_back(ucs_memory_type_names[type]);
    }
  }
  return true;
}

}  // namespace

WorkerCapabilities GatherWorkerCapabilities(const std::string& sysfs_root,
                                            const std::string& cuda_library) {
  WorkerCapabilities capabilities;
  capabilities.cuda = gpu::ReadDriverReport(cuda_library);
  std::vector<std::string> rdma_devices;
  // No class/infiniband/ (no RDMA devices, a container without it): nothing to probe.
  sysfs::RootedFilesystem(sysfs_root).ListDirectory("class/infiniband", &rdma_devices);
  capabilities.dma_buf = gpu::ProbeDmaBuf(rdma_devices);
  capabilities.ucx_memory_types_known = UcxMemoryTypes(&capabilities.ucx_memory_types);
  return capabilities;
}

}  // namespace rail::probe
