// `rail_exporter doctor`: every check the agent runs, evaluated once on this host's sysfs and
// procfs and the probe worker's capabilities (and a peer's hello with --peer), printed top to
// bottom as findings: PASS, FAIL or INFO, the evidence (the file or probe it rests on) and the
// command that fixes it (health::Remedy). The verdicts are the agent's (health::EvaluateSnapshot):
// doctor never judges again.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "rail/gpu/driver.h"

namespace rail::commands {

struct DoctorOptions {
  std::string sysfs_root = "/sys";
  std::string procfs_root = "/proc";
  std::string ethtool_root;  // --path.ethtool: recorded `ethtool -S` dumps; empty: the kernel
  std::string lldpd_socket;  // --collector.neighbor.lldpd-socket; empty: lldpd's default
  std::optional<std::string> config_file;
  std::string peer;                        // HOST[:PORT]; empty: no peer is asked
  std::optional<std::string> secret_file;  // else the config's responder.secret_file
  bool insecure = false;
  std::string worker_path;  // --probe.worker-path; empty: beside this executable
  std::string cuda_library = gpu::kCudaLibrary;  // --cuda.library, loaded by the worker only
  std::string output = "text";                   // text | json
};

enum class FindingStatus { kPass, kFail, kInfo };
const char* FindingStatusName(FindingStatus status);  // "PASS", "FAIL", "INFO"

struct Finding {
  FindingStatus status = FindingStatus::kInfo;
  std::string check;  // a check token (health/checks.h), or an INFO topic ("roce_gid_index")
  std::string rail;
  std::string peer;
  std::string summary;   // the verdict's reason, or what the check confirmed
  std::string evidence;  // the files or probe it rests on
  std::string fix;       // the remedy of a failure; "" otherwise
};

std::string FormatDoctorText(const std::vector<Finding>& findings);
std::string FormatDoctorJson(const std::vector<Finding>& findings);

// The exit code: 0 when every check passes, 1 when one fails, 2 when doctor could not run (bad
// option, unreadable root, broken configuration), with one line on `err`.
int RunDoctor(const DoctorOptions& options, std::ostream& out, std::ostream& err);

}  // namespace rail::commands
