#include "rail/agent/agent.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "rail/agent/fleet_probing.h"
#include "rail/agent/probe_wiring.h"
#include "rail/agent/probing.h"
#include "rail/base/build_info.h"
#include "rail/collectors/collector_set.h"
#include "rail/health/checks.h"
#include "rail/inventory/gid_cache.h"
#include "rail/nic/dcb.h"
#include "rail/peer/responder.h"
#include "rail/probe/result_store.h"
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

// class/net/<netdev>/mtu of each rail with a netdev, for the peers' peer_mtu check.
std::map<std::string, std::uint64_t> RailMtus(const sysfs::Filesystem& sys,
                                              const std::vector<probe::ProbeRail>& rails) {
  std::map<std::string, std::uint64_t> mtus;
  for (const auto& rail : rails) {
    if (rail.netdev.empty()) continue;
    std::string text;
    if (sys.ReadFile("class/net/" + rail.netdev + "/mtu", &text) != 0) continue;
    if (const auto mtu = sysfs::ParseUnsigned(text)) mtus[rail.name] = *mtu;
  }
  return mtus;
}

// responder.listen_address as host and port; ":9841" (node_exporter's spelling) listens on every
// address.
peer::HostPort ResponderAddress(const std::string& listen_address) {
  std::string error;
  const bool every_address = listen_address.front() == ':';
  auto address = peer::ParseHostPort(every_address ? "0.0.0.0" + listen_address : listen_address,
                                     peer::kDefaultResponderPort, &error);
  if (!address) throw AgentError("responder.listen_address: " + error);
  if (every_address) address->host.clear();
  return *address;
}

std::vector<peer::Network> AllowedNetworks(const std::vector<std::string>& texts) {
  std::vector<peer::Network> networks;
  for (const auto& text : texts) {
    std::string error;
    auto network = peer::ParseNetwork(text, &error);
    if (!network) throw AgentError("responder.allowed_networks: " + error);
    networks.push_back(std::move(*network));
  }
  return networks;
}

// responder.name, else the host name: what this agent calls itself in its welcome.
std::string OwnName(const ResponderConfig& config) {
  if (!config.name.empty()) return config.name;
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return {};
  return name;
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
  clock_ = std::make_unique<base::SteadyClock>();
  results_ = std::make_unique<probe::ResultStore>(*clock_);
  device_filter_ = MakeDeviceFilter(options_.device_include, options_.device_exclude);
  StartProbing();
  StartCollectors();
  LogDevicesFound(*sys_, options_.sysfs_root);
  web::WebOptions web_options = options_.web;
  web_options.is_ready = [this] { return started_.load(); };
  web_ = std::make_unique<web::WebServer>(web_options, collectors_,
                                          [this] { return RenderLandingPage(); });
  StartResponder();
  StartProbes();
  started_ = true;
  std::string ports;
  for (int port : web_->ListeningPorts()) {
    ports += (ports.empty() ? "" : ",") + std::to_string(port);
  }
  spdlog::info("listening on port(s) {}, metrics at {}", ports, options_.web.telemetry_path);
}

Agent::~Agent() {
  if (fleet_) fleet_->Stop();
  if (runner_) runner_->Stop();
  if (responder_) responder_->Stop();
}

std::vector<int> Agent::ListeningPorts() const {
  return web_->ListeningPorts();
}

std::uint16_t Agent::ResponderPort() const {
  return responder_ ? responder_->ListeningPort() : std::uint16_t{0};
}

// The agents of a cluster share one secret, so a package can ship none. Until it is placed the
// agent serves its inventory and exchanges nothing with peers, rather than fail to start.
std::shared_ptr<const peer::Secret> Agent::LoadPeerSecret() {
  const auto& path = config_.responder.secret_file;
  if (!path) return nullptr;
  std::string error;
  auto secret = peer::LoadSecretFile(*path, &error);
  peer_secret_loaded_ = secret != nullptr;
  if (!secret) {
    spdlog::error(
        "responder.secret_file: {}. This agent runs without peer traffic (no responder, probes "
        "or fleet) until the secret is in place. Every agent of a cluster shares one secret: make "
        "it once (openssl rand -hex 32), copy it to {} on every host (mode 0600 owned by the "
        "agent's user, or 0640 owned by root with the agent's group) and restart the agent",
        error, *path);
  }
  return secret;
}

// The probe worker runs when this agent answers probes or runs UCX probes itself, and is started
// first: its hello brings the UCX version that the handshake, the checks and build_info report.
void Agent::StartProbing() {
  WorkerSettings worker{options_.probe_worker_path, options_.sysfs_root, options_.log_level,
                        options_.log_format, options_.cuda_library};
  const bool responds = !config_.responder.listen_address.empty();
  if (responds || !config_.probes.empty() || config_.fleet) {
    auto secret = LoadPeerSecret();
    if (peer_secret_loaded_ == false) return;
    probing_ = std::make_unique<ProbeWiring>(*sys_, LocalProbeRails(*sys_, config_, device_filter_),
                                             std::move(secret), *clock_, 4096, std::move(worker));
  }
  const bool ucx_probes =
      std::any_of(config_.probes.begin(), config_.probes.end(), [](const ProbeConfig& entry) {
        const auto kind = probe::ParseProbeKind(entry.kind);
        return kind && probe::NeedsUcx(*kind);
      });
  if (probing_ && (responds || ucx_probes)) probing_->StartWorker();
  ucx_version_ =
      probing_
          ? probing_->Versions().ucx_version
          : probe::QueryWorkerUcxVersion(probe::FindWorkerExecutable(options_.probe_worker_path));
}

void Agent::StartCollectors() {
  collectors::Sources sources;
  sources.inventory.sys = sys_.get();
  sources.inventory.proc = proc_.get();
  sources.inventory.infiniband.device_filter = device_filter_;
  gid_cache_ = std::make_unique<inventory::GidCache>(options_.gid_refresh_interval, *clock_);
  sources.inventory.gid_cache = gid_cache_.get();
  sources.inventory.rails = config_.rails;
  sources.inventory.discover_unlisted = config_.DiscoverUnlisted();
  static const nic::NetlinkDcbReader kKernelDcb;  // stateless: a socket of its own per read
  sources.inventory.dcb = &kKernelDcb;
  sources.self_proc = self_proc_.get();
  sources.responder_stats = [this]() {
    return responder_ ? responder_->Snapshot() : peer::ResponderStats{};
  };
  sources.health.thresholds = config_.health;
  sources.health.results = results_.get();
  sources.health.interface_addresses = health::ReadInterfaceAddresses;
  sources.health.own_agent_version = base::GetBuildInfo().version;
  sources.health.own_ucx_version = ucx_version_;
  sources.health.capabilities = [this]() -> std::optional<probe::WorkerCapabilities> {
    if (!probing_ || probing_->worker() == nullptr) return std::nullopt;
    return probing_->worker()->Status().capabilities;
  };
  sources.fleet = [this]() -> std::optional<fleet::FleetStatus> {
    if (!fleet_) return std::nullopt;
    return fleet_->Status();
  };
  sources.probe_worker = [this]() -> std::optional<probe::WorkerStatus> {
    if (!probing_ || probing_->worker() == nullptr) return std::nullopt;
    return probing_->worker()->Status();
  };
  sources.peer_secret_loaded = peer_secret_loaded_;
  health_log_ = std::make_unique<health::HealthLog>();
  sources.health_log = health_log_.get();
  collectors_ = std::make_shared<collectors::CollectorSet>(std::move(sources), options_.collectors);
}

void Agent::StartResponder() {
  const auto& config = config_.responder;
  if (config.listen_address.empty() || !probing_) return;
  const auto address = ResponderAddress(config.listen_address);
  peer::ResponderOptions options;
  options.listen_host = address.host;
  options.port = address.port;
  options.secret = probing_->secret();
  options.insecure = config.insecure || options_.peer_insecure;
  options.versions = probing_->Versions();
  options.rail_mtus = [this] { return RailMtus(*sys_, probing_->rails()); };
  options.name = OwnName(config);
  options.limits = config.limits;
  options.allowed_networks = AllowedNetworks(config.allowed_networks);
  options.clock = clock_.get();
  // The probe layer's rule, the one the scheduler's jobs are planned by (PlanJob).
  options.is_bulk_kind = [](const std::string& kind) {
    const auto parsed = probe::ParseProbeKind(kind);
    return parsed && probe::IsBulk(*parsed);
  };
  if (!options.secret && !options.insecure) {
    spdlog::warn(
        "responder: no responder.secret_file and no --peer.insecure: every peer will be "
        "refused");
  }
  responder_ = std::make_unique<peer::Responder>(std::move(options), probing_->Handlers());
  if (std::string error; !responder_->Start(&error)) throw AgentError("responder: " + error);
  spdlog::info("responder listening on port {}", responder_->ListeningPort());
}

void Agent::StartProbes() {
  if (!probing_) return;
  if (!config_.probes.empty()) {
    if (config_.responder.listen_address.empty()) {
      // Probes need a secret, which lives in the responder section; the peers probe us back.
      spdlog::info(
          "probes configured without a responder section: this agent will not answer its "
          "peers' probes");
    }
    if (!probing_->secret() && !(config_.responder.insecure || options_.peer_insecure)) {
      throw AgentError("probes need responder.secret_file (or --peer.insecure) to reach peers");
    }
  }
  if (config_.fleet) CheckFleetBudget();
  ApplyPlan({});
  if (config_.fleet) StartFleet();
}

// The largest plan the fleet can give (k peers on every rail) must fit the series budget and the
// scheduler's, so that no later plan can be refused.
void Agent::CheckFleetBudget() const {
  const auto& fleet = *config_.fleet;
  const auto& rails = probing_->rails();
  const auto series = MaxFleetProbeSeries(config_, rails);
  if (series > fleet.max_probe_series) {
    throw AgentError("fleet: the plan can make " + std::to_string(series) +
                     " per-peer probe series, more than fleet.max_probe_series (" +
                     std::to_string(fleet.max_probe_series) +
                     "): lower fleet.peers_per_rail or the probes' message sizes");
  }
  std::vector<fleet::PlannedPair> fullest;
  for (const auto& rail : rails) {
    for (unsigned i = 0; i < fleet.peers_per_rail; ++i) {
      fullest.push_back({"planned-peer-" + std::to_string(i) + ":1", rail.name});
    }
  }
  std::vector<schedule::ProbeJob> jobs;
  for (auto& planned : PlanProbes(config_, rails)) jobs.push_back(std::move(planned.job));
  for (auto& planned : PlanFleetProbes(config_, rails, fullest)) {
    jobs.push_back(std::move(planned.job));
  }
  if (const auto error = schedule::ValidateJobs(jobs, config_.budget)) {
    throw AgentError("probes: with fleet.peers_per_rail " + std::to_string(fleet.peers_per_rail) +
                     " peers on every rail: " + *error);
  }
}

void Agent::StartFleet() {
  std::vector<std::string> rails;
  for (const auto& rail : probing_->rails()) rails.push_back(rail.name);
  const auto peer_names = [this] {
    std::map<std::string, std::string> names;
    for (const auto& state : results_->Snapshot()) {
      if (!state.last.peer_name.empty()) names[state.key.peer] = state.last.peer_name;
    }
    return names;
  };
  fleet_ = std::make_unique<FleetProbing>(
      *config_.fleet, MakeDiscoverySources(*config_.fleet), std::move(rails),
      FleetProbing::Identity{ResponderPort(), OwnName(config_.responder)}, *clock_, peer_names,
      [this](const std::vector<fleet::PlannedPair>& pairs) {
        try {
          ApplyPlan(pairs);
        } catch (const std::exception& error) {
          spdlog::error("fleet: the new plan could not be scheduled: {}", error.what());
        }
      });
  fleet_->Start();
}

void Agent::ApplyPlan(const std::vector<fleet::PlannedPair>& pairs) {
  auto plan = PlanProbes(config_, probing_ ? probing_->rails() : std::vector<probe::ProbeRail>{});
  if (config_.fleet) {
    auto fleet = PlanFleetProbes(config_, probing_->rails(), pairs);
    std::move(fleet.begin(), fleet.end(), std::back_inserter(plan));
  }
  std::set<std::tuple<std::string, std::string, std::string>> planned;  // kind, peer, rail
  for (const auto& probe : plan) {
    planned.emplace(probe.job.kind, probe.job.peer, probe::RailLabel(probe.job.rails));
  }
  std::lock_guard lock(runner_mutex_);
  if (runner_) runner_->Stop();
  runner_.reset();
  results_->Retain(
      [&planned](const std::string& kind, const std::string& peer, const std::string& rail) {
        return planned.contains({kind, peer, rail});
      });
  if (plan.empty()) return;
  const auto jobs = plan.size();
  schedule::SchedulerOptions schedule;
  schedule.budget = config_.budget;
  schedule.bulk_concurrency = config_.bulk_concurrency;
  runner_ = std::make_unique<ProbeRunner>(std::move(plan), schedule, probing_->Context(),
                                          probing_->Probes(), *results_);
  if (std::string error; !runner_->Start(&error)) {
    runner_.reset();
    throw AgentError("probes: " + error);
  }
  spdlog::info("scheduled {} probe job(s) over {} rail(s)", jobs, probing_->rails().size());
}

std::string Agent::RenderLandingPage() const {
  sysfs::ReadErrors errors;
  collectors::Scrape scrape(collectors_->sources(), errors);
  const auto& build = base::GetBuildInfo();
  web::LandingPage page;
  page.version = build.version;
  page.revision = build.revision;
  page.ucx_version = ucx_version_;
  page.telemetry_path = options_.web.telemetry_path;
  page.sysfs_root = options_.sysfs_root;
  return web::RenderLandingPage(web::BuildLandingPage(scrape, std::move(page)));
}

}  // namespace rail::agent
