// The library entry point of the agent, apart from the command line (src/main.cc): options in,
// a serving agent out. Tests and the CLI both go through here.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rail/agent/config.h"
#include "rail/base/errors.h"
#include "rail/fleet/plan.h"
#include "rail/gpu/driver.h"
#include "rail/nic/ethtool.h"
#include "rail/web/web_server.h"

namespace rail::sysfs {
class RootedFilesystem;
}
namespace rail::base {
class SteadyClock;
}
namespace rail::inventory {
class GidCache;
}
namespace rail::peer {
class Responder;
}
namespace rail::probe {
class ResultStore;
}
namespace rail::health {
class HealthLog;
}
namespace rail::collectors {
class CollectorSet;
}

namespace rail::agent {

class FleetProbing;
class ProbeRunner;
class ProbeWiring;

struct AgentOptions {
  web::WebOptions web;
  std::string sysfs_root = "/sys";
  std::string procfs_root = "/proc";
  // --path.ethtool: recorded `ethtool -S` dumps to read instead of the kernel; empty: the kernel.
  std::string ethtool_root;
  std::optional<std::string> config_file;
  std::vector<std::string> collectors;  // enabled collector names
  std::string device_include;           // regex on RDMA device names; empty: all
  std::string device_exclude;           // regex on RDMA device names; empty: none
  bool peer_insecure = false;           // --peer.insecure: accept and probe peers without secret
  // --collector.gid.refresh-interval: GID tables are re-read at most this often (0: every scrape).
  std::chrono::milliseconds gid_refresh_interval{30000};
  // The probe worker (rail/probe/worker.h): --probe.worker-path, empty: beside this executable;
  // it logs as the agent does.
  std::string probe_worker_path;
  // --cuda.library: the CUDA driver the probe worker loads (this process never does).
  std::string cuda_library = gpu::kCudaLibrary;
  std::string log_level = "info";
  std::string log_format = "logfmt";
};

class AgentError : public base::InputError {
 public:
  using base::InputError::InputError;
};

class Agent {
 public:
  // Validates options, loads the configuration and starts serving. Throws AgentError (or
  // ConfigError / WebError, both runtime_error) with a one-line reason.
  explicit Agent(const AgentOptions& options);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  std::vector<int> ListeningPorts() const;
  // The responder's control port; 0 when it does not run.
  std::uint16_t ResponderPort() const;
  std::shared_ptr<collectors::CollectorSet> collectors() const { return collectors_; }
  std::string RenderLandingPage() const;

 private:
  std::shared_ptr<const peer::Secret> LoadPeerSecret();
  void StartProbing();
  void StartCollectors();
  void StartResponder();
  void StartProbes();
  void CheckFleetBudget() const;
  void StartFleet();
  // Re-makes the probe jobs for the fleet plan's `pairs` (and the static peers): the runner is
  // restarted and the series of peers no longer planned are withdrawn. Throws AgentError when the
  // scheduler refuses the jobs (only at start: the plan's size is checked then).
  void ApplyPlan(const std::vector<fleet::PlannedPair>& pairs);

  // Declaration order is teardown order, reversed: probes and responder stop before what they use.
  AgentOptions options_;
  AgentConfig config_;
  std::unique_ptr<sysfs::RootedFilesystem> sys_;
  std::unique_ptr<sysfs::RootedFilesystem> proc_;
  std::unique_ptr<sysfs::RootedFilesystem> self_proc_;
  std::unique_ptr<sysfs::RootedFilesystem> ethtool_dumps_;
  std::unique_ptr<nic::StatisticsSource> nic_statistics_;  // null: the kernel's
  std::unique_ptr<base::SteadyClock> clock_;
  std::unique_ptr<probe::ResultStore> results_;
  std::unique_ptr<inventory::GidCache> gid_cache_;
  std::unique_ptr<health::HealthLog> health_log_;          // the health collector logs changes here
  std::function<bool(const std::string&)> device_filter_;  // compiled once
  std::unique_ptr<ProbeWiring> probing_;    // when probing or responding is configured; owns the
                                            // probe worker, so it outlives responder and runner
  std::string ucx_version_;                 // the probe worker's UCX
  std::optional<bool> peer_secret_loaded_;  // nullopt: no secret_file configured
  std::atomic<bool> started_{false};        // the constructor has finished: /-/ready
  std::shared_ptr<collectors::CollectorSet> collectors_;
  std::unique_ptr<web::WebServer> web_;
  std::unique_ptr<peer::Responder> responder_;
  std::mutex runner_mutex_;  // the fleet thread replaces the runner when the plan changes
  std::unique_ptr<ProbeRunner> runner_;
  std::unique_ptr<FleetProbing> fleet_;  // with a fleet section; stopped first
};

// Builds the device filter of --collector.infiniband.device-include/-exclude. Throws AgentError
// for an invalid regex or when both are given.
std::function<bool(const std::string&)> MakeDeviceFilter(const std::string& include,
                                                         const std::string& exclude);

}  // namespace rail::agent
