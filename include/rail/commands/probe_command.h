// `rail_exporter probe`: runs one probe by hand and prints a table (rails as rows, like
// ib_write_bw and ucx_perftest) or JSON.
#pragma once

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "rail/probe/result.h"
#include "rail/probing/config.h"

namespace rail::commands {

struct ProbeCommandOptions {
  std::string peer;                // host[:port] of the peer's responder
  std::vector<std::string> rails;  // empty: every rail
  std::string kind;
  std::string output = "table";  // table | json
  // A probe run by hand is the scheduled one: the defaults of a probes[] entry.
  std::string operation = probing::ProbeConfig{}.operation;
  std::vector<std::uint64_t> message_sizes_bytes;  // empty: the kind's default
  unsigned window = probing::ProbeConfig{}.window;
  unsigned streams = probing::ProbeConfig{}.streams;
  std::chrono::milliseconds duration = probing::ProbeConfig{}.duration;
  std::chrono::milliseconds timeout{0};  // 0: probing::DefaultTimeout(duration)
  std::string ucx_transports;
  std::string memory = "host";  // --memory: host, cuda, cuda_host (the bulk UCX kinds)
  std::string sysfs_root = "/sys";
  std::optional<std::string> config_file;
  std::optional<std::string> secret_file;  // else the config's responder.secret_file
  bool insecure = false;
  std::string worker_path;  // --probe.worker-path; empty: beside this executable
};

// Returns the process exit code: 0 when every run succeeded, 1 when one failed, 2 for bad
// options (with a one-line error on `err`).
int RunProbeCommand(const ProbeCommandOptions& options, std::ostream& out, std::ostream& err);

std::string FormatProbeTable(const std::vector<probe::ProbeResult>& results);
std::string FormatProbeJson(const std::vector<probe::ProbeResult>& results);

}  // namespace rail::commands
