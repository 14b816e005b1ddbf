// rail_exporter_probe_worker: the process that holds every UCX context (include/rail/probe/
// worker.h). The agent starts it by exec with its pipe as file descriptor 3; people run it only
// as `rail_exporter_probe_worker --ucx-version`.
#include <sys/prctl.h>

#include <csignal>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>

#include "rail/base/build_info.h"
#include "rail/base/log.h"
#include "rail/base/memory.h"
#include "rail/probe/in_process.h"
#include "rail/probe/ucx_version.h"
#include "rail/probe/worker.h"

namespace {

// `--capabilities [--cuda.library=PATH] [--path.sysfs=PATH]`: what the worker would say in its
// hello, as JSON on stdout.
int PrintCapabilities(int argc, char** argv) {
  std::string cuda_library = rail::gpu::kCudaLibrary;
  std::string sysfs_root = "/sys";
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--cuda.library=")) {
      cuda_library = arg.substr(std::strlen("--cuda.library="));
    } else if (arg.starts_with("--path.sysfs=")) {
      sysfs_root = arg.substr(std::strlen("--path.sysfs="));
    } else {
      std::cerr << "--capabilities: unknown option " << arg << "\n";
      return 2;
    }
  }
  rail::base::ConfigureLogging("error", "logfmt");
  const auto capabilities = rail::probe::GatherWorkerCapabilities(sysfs_root, cuda_library);
  std::cout << rail::probe::CapabilitiesToJson(capabilities).dump(2) << "\n";
  return 0;
}

}  // namespace

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
  if (argc >= 2 && std::strcmp(argv[1], "--capabilities") == 0)
    return PrintCapabilities(argc, argv);
  if (argc != 1) {
    std::cerr << "usage: " << argv[0]
              << " [--version | --ucx-version | --capabilities [--cuda.library=PATH]"
                 " [--path.sysfs=PATH]]\n(the agent starts it with its pipe as fd "
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
