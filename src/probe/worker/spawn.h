// Starting the worker executable with its end of the pipe as kWorkerChannelFd, and naming how a
// child ended.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "rail/peer/connection.h"

namespace rail::probe::worker {

struct Spawned {
  pid_t pid = -1;
  base::UniqueFd channel;      // the agent's end
  base::UniqueFd stderr_read;  // the read end of the worker's stderr (StderrRelay)
};

// posix_spawn of `executable` with `arguments`, in the agent's environment plus `environment`
// ("NAME=value" entries, which replace the agent's own of the same name); its stdout is the
// agent's, its stderr a pipe whose read end the agent relays (stderr_relay.h). pid -1 and
// `error` set when it cannot be started.
Spawned SpawnWorker(const std::string& executable, const std::vector<std::string>& arguments,
                    const std::vector<std::string>& environment, std::string* error);

// Runs `executable` with `arguments` to completion (no shell: the container image has none) and
// returns what it wrote on stdout; its stderr goes to /dev/null. nullopt and `error` when it could
// not start or did not exit 0.
std::optional<std::string> RunForOutput(const std::string& executable,
                                        const std::vector<std::string>& arguments,
                                        std::string* error);

// "sigabrt", "sigsegv", "exit_1", ... from a waitpid status.
std::string DeathReason(int wait_status);

}  // namespace rail::probe::worker
