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
#include "rail/base/clock.h"
#include "rail/base/errors.h"
#include "rail/collectors/collector_set.h"
#include "rail/collectors/config_reload.h"
#include "rail/fleet/plan.h"
#include "rail/gpu/driver.h"
#include "rail/lldp/neighbors.h"
#include "rail/nic/ethtool.h"
#include "rail/web/web_server.h"

namespace rail::sysfs {
class RootedFilesystem;
}
namespace rail::inventory {
class GidCache;
}
namespace rail::nic {
class NetdevChanges;
}
namespace rail::probe {
class ResultStore;
}
namespace rail::probing {
class ProbingService;
}
namespace rail::health {
class HealthLog;
class FabricSampler;
}  // namespace rail::health

namespace rail::agent {

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
  // --collector.gid.refresh-interval: GID tables are re-read at least this often, and sooner when
  // rtnetlink says their netdevs changed (0: every scrape).
  std::chrono::milliseconds gid_refresh_interval{std::chrono::minutes(5)};
  // --collector.gid.entries: which GID entries rail_gid_info publishes.
  collectors::GidEntryScope gid_entries = collectors::GidEntryScope::kRoceV2Ipv4;
  // --collector.neighbor.lldpd-socket: lldpd's control socket; empty: lldpd's default.
  std::string lldpd_socket;
  // The probe worker (rail/probe/worker.h): --probe.worker-path, empty: beside this executable;
  // it logs as the agent does.
  std::string probe_worker_path;
  // --cuda.library: the CUDA driver the probe worker loads (this process never does).
  std::string cuda_library = gpu::kCudaLibrary;
  std::string log_level = "info";
  std::string log_format = "logfmt";
  // --web.enable-lifecycle: POST /-/reload (behind the endpoint's authentication).
  bool enable_lifecycle = false;
  // Set by the signal thread of src/main.cc at any moment, during start included: the start
  // gives up at its next step and the agent never serves. May be null.
  const std::atomic<bool>* stop_requested = nullptr;
  // Draws the probes' jitter; 0: a random seed.
  std::uint64_t seed = 0;
};

class AgentError : public base::InputError {
 public:
  using base::InputError::InputError;
};

class Agent {
 public:
  // Validates options, loads the configuration, starts probing and, last, the web server.
  // Throws AgentError (or ConfigError / WebError, both runtime_error) with a one-line reason.
  // When options.stop_requested is set during start, returns without serving (Serving() false).
  explicit Agent(const AgentOptions& options);
  ~Agent();  // Stop()
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Stops the web server first (requests in flight end, each bounded by the request timeout),
  // then probing: the fleet planner (a discovery fetch abandoned), the runner (in-flight probes
  // cancelled), the responder (sessions refused with `shutdown`) and the probe worker (waited
  // for). Every part is given the same deadline, probing::kStopDeadline from now.
  void Stop();
  bool Serving() const { return web_ != nullptr; }

  // Re-reads --config.file (and the secret file it names) and applies it as a whole, or refuses
  // it as a whole (the running configuration stays; the reason is logged and returned).
  // Reloads are serialized. `trigger` names the cause in the log ("SIGHUP", "POST /-/reload").
  std::optional<std::string> Reload(const std::string& trigger);
  collectors::ConfigReloadState LastReload() const;

  std::vector<int> ListeningPorts() const;
  // The responder's control port; 0 when it does not run.
  std::uint16_t ResponderPort() const;
  std::shared_ptr<collectors::CollectorSet> collectors() const { return collectors_; }
  std::string RenderLandingPage() const;

 private:
  bool StopRequested() const;
  void StartCollectors();
  inventory::GidCache* MakeGidCache();
  void StartWeb();
  std::optional<std::string> ApplyReload(const AgentConfig& next);

  // Declaration order is teardown order, reversed: what probing and scrapes use outlives them.
  AgentOptions options_;
  AgentConfig config_;  // as started; a reload replaces what the probing service runs from
  std::unique_ptr<sysfs::RootedFilesystem> sys_;
  std::unique_ptr<sysfs::RootedFilesystem> proc_;
  std::unique_ptr<sysfs::RootedFilesystem> self_proc_;
  std::unique_ptr<sysfs::RootedFilesystem> ethtool_dumps_;
  std::unique_ptr<nic::StatisticsSource> nic_statistics_;  // null: the kernel's
  std::unique_ptr<lldp::NeighborSource> lldp_neighbors_;
  std::unique_ptr<base::SteadyClock> clock_;
  std::unique_ptr<probe::ResultStore> results_;
  std::unique_ptr<nic::NetdevChanges> netdev_changes_;  // before the cache that calls it
  std::unique_ptr<inventory::GidCache> gid_cache_;
  std::unique_ptr<inventory::PcieTopologyCache> topology_cache_;
  std::unique_ptr<health::HealthLog> health_log_;          // the health collector logs changes here
  std::function<bool(const std::string&)> device_filter_;  // compiled once
  std::unique_ptr<probing::ProbingService> probing_;
  std::atomic<bool> started_{false};  // the constructor has finished: /-/ready
  std::mutex reload_mutex_;           // one reload at a time
  std::unique_ptr<collectors::ConfigReloadRecord> reload_record_;  // stamps on clock_
  std::shared_ptr<collectors::CollectorSet> collectors_;
  // Samples the fabric counters between scrapes; reads what collectors_ was given.
  std::unique_ptr<health::FabricSampler> fabric_sampler_;
  std::unique_ptr<web::WebServer> web_;  // started last, stopped first
};

// Builds the device filter of --collector.infiniband.device-include/-exclude. Throws AgentError
// for an invalid regex or when both are given.
std::function<bool(const std::string&)> MakeDeviceFilter(const std::string& include,
                                                         const std::string& exclude);

}  // namespace rail::agent
