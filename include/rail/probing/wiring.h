// What running probes needs, built one way for the agent's schedule and for the `probe` command:
// the local rails as the probes see them, the shared secret, our versions for the handshake, the
// replay cache of responder nonces and the rails' counter reader.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/peer/auth.h"
#include "rail/peer/secret.h"
#include "rail/probe/counters.h"
#include "rail/probe/probe.h"
#include "rail/probe/worker.h"
#include "rail/probing/config.h"
#include "rail/sysfs/filesystem.h"

namespace rail::probing {

using DeviceFilter = std::function<bool(const std::string&)>;

// The rails as the probes use them, read once.
std::vector<probe::ProbeRail> LocalProbeRails(const sysfs::Filesystem& sys,
                                              const ProbingConfig& config,
                                              const DeviceFilter& filter = {});

// The worker's own environment that `config` asks for: with ucx_device_quirk_workaround, the
// settings that avoid a known fault of the worker's UCX (asked of `worker_executable`) on a
// rail's device (probe/ucx_quirks.h), logged as a warning; else, or when no rail has one, none.
std::vector<std::string> UcxQuirkWorkaround(const sysfs::Filesystem& sys,
                                            const ProbingConfig& config, const DeviceFilter& filter,
                                            const std::string& worker_executable);

// The secret in `path`, or nullptr without a path. Throws ConfigError "<what>: <reason>".
std::shared_ptr<const peer::Secret> LoadSecret(const std::optional<std::string>& path,
                                               const std::string& what);

// Where the probe worker is and how it logs (rail/probe/worker.h).
struct WorkerSettings {
  std::string executable;  // --probe.worker-path; empty: beside this executable
  std::string sysfs_root = "/sys";
  std::string log_level = "info";
  std::string log_format = "logfmt";
  std::string cuda_library = gpu::kCudaLibrary;  // --cuda.library, loaded by the worker only
  // "NAME=value" entries for the worker's environment only (UcxQuirkWorkaround).
  std::vector<std::string> environment = {};
};

class ProbeWiring {
 public:
  ProbeWiring(const sysfs::Filesystem& sys, std::vector<probe::ProbeRail> rails,
              std::shared_ptr<const peer::Secret> secret, const base::Clock& clock,
              std::size_t remembered_nonces, WorkerSettings worker);
  ~ProbeWiring();

  const std::vector<probe::ProbeRail>& rails() const { return rails_; }
  // nullptr: no secret configured.
  const std::shared_ptr<const peer::Secret>& secret() const { return secret_; }
  // Connects to peers with the secret and our versions; reads the rails' counters.
  probe::ProbeContext Context() const;
  // This agent's and its UCX's versions, as the handshake reports them. The UCX version is the
  // worker's: the agent process does not load UCX.
  peer::AgentVersions Versions() const;

  // Starts the probe worker (once; later calls do nothing) and waits for its hello, or until
  // `abandon` is set (a stop during start). A worker that does not come up is logged and retried
  // in the background, never fatal: the agent keeps serving its inventory.
  void StartWorker(const std::atomic<bool>* abandon = nullptr);
  // The agent's stop deadline, before the runs are cancelled (probe::ProbeWorker::StopBy).
  void StopWorkerBy(const base::Deadline& by);
  // Ends the worker and waits until it has exited (probe::ProbeWorker::Stop).
  void StopWorker();
  // nullptr until StartWorker; the worker then lives as long as this wiring.
  const probe::ProbeWorker* worker() const;
  // The probes: TCP here, UCX through the worker (nullptr for those before StartWorker).
  probe::ProbeMaker Probes();
  // The responder's handlers: TCP here, UCX in the worker (started here).
  peer::ProbeHandlerFactory Handlers();

 private:
  probe::ProbeWorker* MutableWorker() const;

  std::vector<probe::ProbeRail> rails_;
  std::shared_ptr<const peer::Secret> secret_;
  const base::Clock& clock_;  // the worker's supervision and the peer connections' deadlines
  std::unique_ptr<peer::ReplayCache> seen_responder_nonces_;
  std::unique_ptr<probe::RailCounterReader> counters_;
  WorkerSettings worker_settings_;
  // Set once (StartWorker), read by scrapes on other threads.
  mutable std::mutex worker_mutex_;
  std::unique_ptr<probe::ProbeWorker> worker_;
  mutable std::string ucx_version_;  // queried once when no worker runs
};

}  // namespace rail::probing
