// rail_exporter_probe_worker: the process that holds every UCX context (include/rail/probe/
// worker.h). The agent starts it by exec with its pipe as file descriptor 3; people run it only
// as `rail_exporter_probe_worker --ucx-version`.
#include <sys/prctl.h>

#include <csignal>
#include <cstring>
#include <iostream>

#include "rail/base/build_info.h"
#include "rail/base/memory.h"
#include "rail/probe/in_process.h"
#include "rail/probe/ucx_version.h"
#include "rail/probe/worker.h"

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--ucx-version") == 0) {
    std::cout << rail::probe::UcxRuntimeVersion() << "\n";
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::cout << "rail_exporter_probe_worker " << rail::base::GetBuildInfo().version << " (UCX "
              << rail::probe::UcxRuntimeVersion() << ")\n";
    return 0;
  }
  if (argc != 1) {
    std::cerr << "usage: " << argv[0]
              << " [--version | --ucx-version]\n(the agent starts it with its pipe as fd "
              << rail::probe::kWorkerChannelFd << ")\n";
    return 2;
  }
  rail::base::TuneMemoryAllocator();
  // The agent may die without closing the pipe cleanly (SIGKILL): the kernel then ends us too.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::signal(SIGPIPE, SIG_IGN);
  // The agent owns SIGINT and SIGTERM (a Ctrl-C reaches the whole process group): we end when
  // it closes the pipe, after our probes have drained.
  std::signal(SIGINT, SIG_IGN);
  return rail::probe::RunProbeWorker(rail::probe::kWorkerChannelFd);
}
