// The library entry point of the agent, apart from the command line (src/main.cc): options in,
// a serving agent out. Tests and the CLI both go through here.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rail/config.h"
#include "rail/scrape_snapshot.h"
#include "rail/web.h"

namespace rail {

class CollectorSet;
class GidCache;
class ProbeRunner;
namespace sysfs {
class RootedFilesystem;
}
namespace peer {
class Responder;
class ReplayCache;
}  // namespace peer
namespace probe {
struct ProbeRail;
class ResultStore;
class RailCounterReader;
}  // namespace probe
namespace schedule {
class SteadyClock;
}
namespace health {
class HealthLog;
}
class WebServer;

struct AgentOptions {
  WebOptions web;
  std::string sysfs_root = "/sys";
  std::string procfs_root = "/proc";
  std::optional<std::string> config_file;
  std::vector<std::string> collectors;  // enabled collector names
  std::string device_include;           // regex on RDMA device names; empty: all
  std::string device_exclude;           // regex on RDMA device names; empty: none
  bool peer_insecure = false;           // --peer.insecure: accept and probe peers without secret
  // --collector.gid.refresh-interval: GID tables are re-read at most this often (0: every scrape).
  std::chrono::milliseconds gid_refresh_interval{30000};
};

class AgentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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
  std::shared_ptr<CollectorSet> collectors() const { return collectors_; }
  std::string RenderLandingPage() const;

 private:
  void StartResponder();
  void StartProbes();

  // Declaration order is teardown order, reversed: probes and responder stop before what they use.
  AgentOptions options_;
  AgentConfig config_;
  std::unique_ptr<sysfs::RootedFilesystem> sys_;
  std::unique_ptr<sysfs::RootedFilesystem> proc_;
  std::unique_ptr<sysfs::RootedFilesystem> self_proc_;
  std::unique_ptr<schedule::SteadyClock> clock_;
  std::unique_ptr<peer::ReplayCache> seen_responder_nonces_;
  std::unique_ptr<probe::ResultStore> results_;
  std::unique_ptr<probe::RailCounterReader> counter_reader_;
  std::unique_ptr<GidCache> gid_cache_;
  std::unique_ptr<health::HealthLog> health_log_;          // the health collector logs changes here
  std::function<bool(const std::string&)> device_filter_;  // compiled once
  SnapshotSources sources_;                                // what scrapes and the landing page read
  std::vector<probe::ProbeRail> probe_rails_;  // read once at start, when probing is configured
  std::shared_ptr<CollectorSet> collectors_;
  std::unique_ptr<WebServer> web_;
  std::unique_ptr<peer::Responder> responder_;
  std::unique_ptr<ProbeRunner> runner_;
};

// Builds the device filter of --collector.infiniband.device-include/-exclude. Throws AgentError
// for an invalid regex or when both are given.
std::function<bool(const std::string&)> MakeDeviceFilter(const std::string& include,
                                                         const std::string& exclude);

}  // namespace rail
