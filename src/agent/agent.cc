#include "rail/agent/agent.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>
#include <regex>

#include "rail/base/build_info.h"
#include "rail/collectors/collector_set.h"
#include "rail/health/checks.h"
#include "rail/health/fabric_sampler.h"
#include "rail/inventory/gid_cache.h"
#include "rail/inventory/topology_cache.h"
#include "rail/nic/dcb.h"
#include "rail/nic/netdev_changes.h"
#include "rail/probe/result_store.h"
#include "rail/probing/service.h"
#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/values.h"
#include "rail/web/landing_page.h"

namespace rail::agent {
namespace {

std::regex CompileDeviceRegex(const std::string& pattern, const char* flag) {
  try {
    return std::regex(pattern, std::regex::extended);
  } catch (const std::regex_error& error) {
    throw AgentError(std::string("--collector.infiniband.") + flag + ": invalid regex '" + pattern +
                     "': " + error.what());
  }
}

void CheckCollectorNames(const std::vector<std::string>& names) {
  const auto& known = collectors::KnownCollectors();
  for (const auto& name : names) {
    if (std::none_of(known.begin(), known.end(),
                     [&name](const auto& info) { return info.name == name; })) {
      throw AgentError("unknown collector '" + name + "'");
    }
  }
}

void LogDevicesFound(const sysfs::Filesystem& sys, const std::string& root) {
  sysfs::ReadErrors errors;
  const auto devices = sysfs::ListInfinibandDevices(sys, errors);
  if (devices.empty()) {
    spdlog::warn(
        "found no RDMA device under {}/class/infiniband: serving netdev and bond inventory only",
        root);
  } else {
    spdlog::info("found {} RDMA device(s) under {}/class/infiniband", devices.size(), root);
  }
}

}  // namespace

std::function<bool(const std::string&)> MakeDeviceFilter(const std::string& include,
                                                         const std::string& exclude) {
  if (!include.empty() && !exclude.empty()) {
    throw AgentError(
        "--collector.infiniband.device-include and --collector.infiniband.device-exclude are "
        "mutually exclusive");
  }
  if (!include.empty()) {
    auto regex = CompileDeviceRegex(include, "device-include");
    return [regex](const std::string& device) { return std::regex_search(device, regex); };
  }
  if (!exclude.empty()) {
    auto regex = CompileDeviceRegex(exclude, "device-exclude");
    return [regex](const std::string& device) { return !std::regex_search(device, regex); };
  }
  return {};
}

Agent::Agent(const AgentOptions& options) : options_(options) {
  CheckCollectorNames(options_.collectors);
  if (options_.config_file) config_ = LoadConfigFile(*options_.config_file);
  sys_ = std::make_unique<sysfs::RootedFilesystem>(options_.sysfs_root);
  proc_ = std::make_unique<sysfs::RootedFilesystem>(options_.procfs_root);
  self_proc_ = std::make_unique<sysfs::RootedFilesystem>("/proc");
  if (!options_.ethtool_root.empty()) {
    ethtool_dumps_ = std::make_unique<sysfs::RootedFilesystem>(options_.ethtool_root);
    nic_statistics_ = std::make_unique<nic::DumpStatisticsSource>(*ethtool_dumps_);
  }
  clock_ = std::make_unique<base::SteadyClock>();
  results_ = std::make_unique<probe::ResultStore>(*clock_);
  device_filter_ = MakeDeviceFilter(options_.device_include, options_.device_exclude);
  probing::ServiceOptions service;
  service.worker = {options_.probe_worker_path, options_.sysfs_root, options_.log_level,
                    options_.log_format, options_.cuda_library};
  service.peer_insecure = options_.peer_insecure;
  service.device_filter = device_filter_;
  service.seed = options_.seed != 0 ? options_.seed : std::random_device{}();
  service.stop_requested = options_.stop_requested;
  probing_ = std::make_unique<probing::ProbingService>(config_.probing, std::move(service), *sys_,
                                                       *clock_, *results_);
  probing_->Start();
  reload_record_ = std::make_unique<collectors::ConfigReloadRecord>(*clock_);
  if (StopRequested()) return;
  StartCollectors();
  LogDevicesFound(*sys_, options_.sysfs_root);
  StartWeb();
}

Agent::~Agent() {
  Stop();
}

bool Agent::StopRequested() const {
  return options_.stop_requested != nullptr && options_.stop_requested->load();
}

void Agent::StartWeb() {
  web::WebOptions web_options = options_.web;
  web_options.is_ready = [this] { return started_.load(); };
  if (options_.enable_lifecycle) {
    web_options.reload = [this] { return Reload("POST /-/reload"); };
  }
  web_ = std::make_unique<web::WebServer>(web_options, collectors_,
                                          [this] { return RenderLandingPage(); });
  started_ = true;
  std::string ports;
  for (int port : web_->ListeningPorts()) {
    ports += (ports.empty() ? "" : ",") + std::to_string(port);
  }
  spdlog::info("listening on port(s) {}, metrics at {}", ports, options_.web.telemetry_path);
}

void Agent::Stop() {
  started_ = false;
  if (!probing_) return;  // started first: without it nothing else was
  // One deadline for the whole stop, handed to every part that waits.
  const auto by = probing_->StopDeadline();
  if (web_) web_->Stop(by);
  web_.reset();  // no scrape, landing page or reload runs past here
  if (fabric_sampler_) fabric_sampler_->Stop();
  probing_->Stop(by);
}

std::vector<int> Agent::ListeningPorts() const {
  return web_ ? web_->ListeningPorts() : std::vector<int>{};
}

std::uint16_t Agent::ResponderPort() const {
  return probing_->ResponderPort();
}

std::optional<std::string> Agent::Reload(const std::string& trigger) {
  std::lock_guard serial(reload_mutex_);
  std::optional<std::string> refused;
  if (!options_.config_file) {
    spdlog::info("reload ({}): no --config.file, nothing to re-read", trigger);
  } else {
    try {
      refused = ApplyReload(LoadConfigFile(*options_.config_file));
    } catch (const std::exception& error) {
      refused = error.what();
    }
  }
  reload_record_->Record(!refused);
  if (refused) {
    spdlog::error("reload ({}) refused, the running configuration stays: {}", trigger, *refused);
  } else {
    spdlog::info("reload ({}): {} applied", trigger, options_.config_file.value_or("nothing"));
  }
  return refused;
}

// What the agent holds itself (the health thresholds the collectors were made with) is
// restart-only; the probing service judges and applies the rest.
std::optional<std::string> Agent::ApplyReload(const AgentConfig& next) {
  if (!(next.health == config_.health)) {
    return "the health section takes effect at a restart only";
  }
  if (auto refused = probing_->Apply(next.probing)) return refused;
  config_.probing = next.probing;
  return std::nullopt;
}

// Every source reads the probing service, which outlives the web server (Stop), through its
// status: nothing a scrape calls waits on a probe, a worker restart or a re-plan.
void Agent::StartCollectors() {
  collectors::Sources sources;
  sources.inventory.sys = sys_.get();
  sources.inventory.proc = proc_.get();
  sources.inventory.nic_statistics = nic_statistics_.get();
  sources.inventory.infiniband.device_filter = device_filter_;
  sources.inventory.gid_cache = MakeGidCache();
  sources.gid_entries = options_.gid_entries;
  topology_cache_ = std::make_unique<inventory::PcieTopologyCache>();
  sources.inventory.topology_cache = topology_cache_.get();
  sources.inventory.rails = config_.probing.rails;
  sources.inventory.discover_unlisted = config_.probing.DiscoverUnlisted();
  static const nic::NetlinkDcbReader kKernelDcb;  // stateless: a socket of its own per read
  sources.inventory.dcb = &kKernelDcb;
  lldp_neighbors_ = std::make_unique<lldp::LldpdNeighborSource>(options_.lldpd_socket);
  sources.inventory.lldp = lldp_neighbors_.get();
  sources.inventory.clock = clock_.get();
  sources.self_proc = self_proc_.get();
  const probing::ProbingService* probing = probing_.get();
  sources.responder_stats = [probing] {
    return probing->ResponderState().value_or(peer::ResponderStats{});
  };
  sources.health.thresholds = config_.health;
  sources.health.figures = config_.probing.figures;
  sources.health.results = results_.get();
  sources.health.clock = clock_.get();
  sources.health.interface_addresses = health::ReadInterfaceAddresses;
  sources.health.own_agent_version = base::GetBuildInfo().version;
  sources.health.own_ucx_version = probing->UcxVersion();
  sources.health.capabilities = [probing] { return probing->WorkerCapabilities(); };
  sources.fleet = [probing] { return probing->FleetState(); };
  sources.probe_worker = [probing] { return probing->WorkerState(); };
  sources.peer_secret_loaded = probing->PeerSecretLoaded();
  sources.config_reload = [this] { return LastReload(); };
  health_log_ = std::make_unique<health::HealthLog>();
  sources.health_log = health_log_.get();
  collectors_ = std::make_shared<collectors::CollectorSet>(std::move(sources), options_.collectors);
  if (config_.health.fabric_sample_interval > base::Duration::zero()) {
    const auto& selected = collectors_->sources();
    fabric_sampler_ = std::make_unique<health::FabricSampler>(
        selected.inventory, config_.health, selected.health.counter_history, *clock_);
    fabric_sampler_->Start();
  }
}

// The GID tables follow rtnetlink's notifications when the socket opens; without it the refresh
// interval alone bounds how old a table is.
inventory::GidCache* Agent::MakeGidCache() {
  std::string error;
  netdev_changes_ = nic::RtnetlinkChanges::Open(*sys_, &error);
  if (!netdev_changes_) {
    spdlog::warn("GID tables are re-read every {} s, not on address changes: {}",
                 std::chrono::duration<double>(options_.gid_refresh_interval).count(), error);
  }
  gid_cache_ = std::make_unique<inventory::GidCache>(options_.gid_refresh_interval, *clock_,
                                                     netdev_changes_.get());
  return gid_cache_.get();
}

collectors::ConfigReloadState Agent::LastReload() const {
  return reload_record_->Last();
}

std::string Agent::RenderLandingPage() const {
  sysfs::ReadErrors errors;
  collectors::Scrape scrape(collectors_->sources(), errors);
  const auto& build = base::GetBuildInfo();
  web::LandingPage page;
  page.version = build.version;
  page.revision = build.revision;
  page.ucx_version = probing_->UcxVersion();
  page.telemetry_path = options_.web.telemetry_path;
  page.sysfs_root = options_.sysfs_root;
  return web::RenderLandingPage(web::BuildLandingPage(scrape, std::move(page)));
}

}  // namespace rail::agent
