// Every probe kind in the calling process: what the probe worker runs, and what the unit tests
// use. Defined in rail_probe_ucx, the one library that links UCX; the agent never links it (it
// reaches these through the worker, worker.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "rail/peer/responder.h"
#include "rail/probe/probe.h"
#include "rail/probe/worker.h"

namespace rail::probe {

std::unique_ptr<Probe> MakeProbe(ProbeKind kind);
// The responder half of a UCX kind; nullptr for another kind, or several rails for a kind that
// takes one.
std::unique_ptr<peer::ProbeSessionHandler> MakeUcxHandler(ProbeKind kind,
                                                          const std::vector<ProbeRail>& rails);
// MakeProbeHandlerFactory (handler_factory.h) with the in-process UCX halves.
peer::ProbeHandlerFactory MakeProbeHandlerFactory(std::vector<ProbeRail> local_rails);

// Where the UCX probes of this process find GPUs for memory other than host: the sysfs tree of
// the PCIe topology and the CUDA driver library (empty: libcuda.so.1). Nothing is loaded here:
// the driver is loaded the first time a probe or handler asks for GPU memory. Naming another
// library drops the loaded one: only while no probe runs.
void ConfigureProbeGpu(const std::string& sysfs_root, const std::string& cuda_library);

// What this process can move and how (worker.h): the CUDA driver at `cuda_library`, dma-buf
// registration on every RDMA device under `sysfs_root` (class/infiniband/), UCX's memory types.
WorkerCapabilities GatherWorkerCapabilities(const std::string& sysfs_root,
                                            const std::string& cuda_library);

// The worker process's main loop on the pipe `fd` (worker.h); returns the exit status.
int RunProbeWorker(int fd);

}  // namespace rail::probe
