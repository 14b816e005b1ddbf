#include "rail/agent.h"

#include <spdlog/spdlog.h>

#include <map>
#include <regex>

#include "rail/build_info.h"
#include "rail/collector_set.h"
#include "rail/gid_cache.h"
#include "rail/health/checks.h"
#include "rail/health/snapshot_checks.h"
#include "rail/landing_page.h"
#include "rail/peer/client.h"
#include "rail/peer/responder.h"
#include "rail/probe/handler_factory.h"
#include "rail/probe/result_store.h"
#include "rail/probing.h"
#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/values.h"

namespace rail {
namespace {

std::regex CompileDeviceRegex(const std::string& pattern, const char* flag) {
  try {
    return std::regex(pattern, std::regex::extended);
  } catch (const std::regex_error& error) {
    throw AgentError(std::string("--collector.infiniband.") + flag + ": invalid regex '" + pattern +
                     "': " + error.what());
  }
}

// The rails as the probes use them, read once at start.
std::vector<probe::ProbeRail> LocalProbeRails(
    const sysfs::Filesystem& sys, const AgentConfig& config,
    const std::function<bool(const std::string&)>& filter) {
  sysfs::ReadErrors errors;
  sysfs::InfinibandReadOptions read;
  read.counters = false;
  read.hw_counters = false;
  read.device_filter = filter;
  return MakeProbeRails(DiscoverRails(sysfs::ReadInfiniband(sys, read, errors), config));
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
  for (const auto& name : options_.collectors) {
    const auto& known = KnownCollectors();
    if (std::none_of(known.begin(), known.end(),
                     [&name](const CollectorInfo& info) { return info.name == name; })) {
      throw AgentError("unknown collector '" + name + "'");
    }
  }
  if (options_.config_file) config_ = LoadConfigFile(*options_.config_file);
  sys_ = std::make_unique<sysfs::RootedFilesystem>(options_.sysfs_root);
  proc_ = std::make_unique<sysfs::RootedFilesystem>(options_.procfs_root);
  self_proc_ = std::make_unique<sysfs::RootedFilesystem>("/proc");

  clock_ = std::make_unique<schedule::SteadyClock>();
  results_ = std::make_unique<probe::ResultStore>();
  counter_reader_ = std::make_unique<probe::RailCounterReader>(*sys_);

  SnapshotSources& sources = sources_;
  sources.results = results_.get();
  sources.responder_stats = [this]() {
    return responder_ ? responder_->Snapshot() : peer::ResponderStats{};
  };
  sources.sys = sys_.get();
  sources.proc = proc_.get();
  sources.self_proc = self_proc_.get();
  sources.config = &config_;
  device_filter_ = MakeDeviceFilter(options_.device_include, options_.device_exclude);
  sources.infiniband.device_filter = device_filter_;
  SelectReads(options_.collectors, &sources);
  health_log_ = std::make_unique<health::HealthLog>();
  sources.health_log = health_log_.get();
  sources.interface_addresses = health::ReadInterfaceAddresses;
  gid_cache_ = std::make_unique<GidCache>(options_.gid_refresh_interval);
  sources.gid_cache = gid_cache_.get();
  collectors_ = std::make_shared<CollectorSet>(sources, options_.collectors);

  {
    sysfs::ReadErrors errors;
    const auto devices = sysfs::ListInfinibandDevices(*sys_, errors);
    if (devices.empty()) {
      spdlog::warn(
          "found no RDMA device under {}/class/infiniband: serving netdev and bond "
          "inventory only",
          options_.sysfs_root);
    } else {
      spdlog::info("found {} RDMA device(s) under {}/class/infiniband", devices.size(),
                   options_.sysfs_root);
    }
  }
  web_ = std::make_unique<WebServer>(options_.web, collectors_,
                                     [this] { return RenderLandingPage(); });
  if (!config_.responder.listen_address.empty() || !config_.probes.empty()) {
    probe_rails_ = LocalProbeRails(*sys_, config_, device_filter_);
  }
  StartResponder();
  StartProbes();
  std::string ports;
  for (int port : web_->ListeningPorts())
    ports += (ports.empty() ? "" : ",") + std::to_string(port);
  spdlog::info("listening on port(s) {}, metrics at {}", ports, options_.web.telemetry_path);
}

Agent::~Agent() {
  if (runner_) runner_->Stop();
  if (responder_) responder_->Stop();
}

std::vector<int> Agent::ListeningPorts() const {
  return web_->ListeningPorts();
}

std::uint16_t Agent::ResponderPort() const {
  return responder_ ? responder_->ListeningPort() : std::uint16_t{0};
}

namespace {

std::shared_ptr<const peer::Secret> LoadSecret(const AgentConfig& config) {
  if (!config.responder.secret_file) return nullptr;
  std::string error;
  auto secret = peer::LoadSecretFile(*config.responder.secret_file, &error);
  if (!secret) throw AgentError("responder.secret_file: " + error);
  return secret;
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

peer::AgentVersions OurVersions() {
  const auto& build = GetBuildInfo();
  return {build.version, build.ucx_version};
}

}  // namespace

void Agent::StartResponder() {
  const auto& config = config_.responder;
  if (config.listen_address.empty()) return;
  std::string error;
  // ":9841" (node_exporter's spelling) listens on every address.
  const bool every_address = config.listen_address.front() == ':';
  const auto address =
      peer::ParseHostPort(every_address ? "0.0.0.0" + config.listen_address : config.listen_address,
                          peer::kDefaultResponderPort, &error);
  if (!address) throw AgentError("responder.listen_address: " + error);
  peer::ResponderOptions options;
  options.listen_host = every_address ? "" : address->host;
  options.port = address->port;
  options.secret = LoadSecret(config_);
  options.insecure = config.insecure || options_.peer_insecure;
  options.versions = OurVersions();
  options.rail_mtus = [this] { return RailMtus(*sys_, probe_rails_); };
  options.limits.max_frame_bytes = config.max_frame_bytes;
  options.limits.max_concurrent_sessions = config.max_concurrent_sessions;
  options.limits.max_connections_per_ip = config.max_connections_per_ip;
  for (const auto& text : config.allowed_networks) {
    auto network = peer::ParseNetwork(text, &error);
    if (!network) throw AgentError("responder.allowed_networks: " + error);
    options.allowed_networks.push_back(std::move(*network));
  }
  options.limits.max_bytes_per_probe = config.max_bytes_per_probe;
  options.limits.max_seconds_per_probe = config.max_seconds_per_probe;
  options.limits.probes_per_minute_per_peer = config.probes_per_minute_per_peer;
  options.limits.probe_burst_per_peer = config.probe_burst_per_peer;
  options.clock = clock_.get();
  if (!options.secret && !options.insecure) {
    spdlog::warn(
        "responder: no responder.secret_file and no --peer.insecure: every peer will "
        "be refused");
  }
  responder_ = std::make_unique<peer::Responder>(std::move(options),
                                                 probe::MakeProbeHandlerFactory(probe_rails_));
  if (!responder_->Start(&error)) throw AgentError("responder: " + error);
  spdlog::info("responder listening on port {}", responder_->ListeningPort());
}

void Agent::StartProbes() {
  if (config_.probes.empty()) return;
  if (config_.responder.listen_address.empty()) {
    // Probes need a secret, which lives in the responder section; the peers probe us back.
    spdlog::info(
        "probes configured without a responder section: this agent will not answer "
        "its peers' probes");
  }
  auto plan = PlanProbes(config_, probe_rails_);
  auto secret = LoadSecret(config_);
  if (!secret && !(config_.responder.insecure || options_.peer_insecure)) {
    throw AgentError("probes need responder.secret_file (or --peer.insecure) to reach peers");
  }
  seen_responder_nonces_ =
      std::make_unique<peer::ReplayCache>(*clock_, 4096, std::chrono::hours(1));
  probe::ProbeContext context;
  context.connect = peer::MakePeerConnector(secret, OurVersions(), *seen_responder_nonces_);
  context.counters = counter_reader_.get();
  context.all_rails = probe_rails_;
  schedule::Budget budget;
  budget.max_bulk_time_fraction_per_rail = config_.budget.max_bulk_time_fraction_per_rail;
  budget.max_bytes_per_hour = config_.budget.max_bytes_per_hour;
  const auto jobs = plan.size();
  runner_ = std::make_unique<ProbeRunner>(std::move(plan), budget, std::move(context), *results_);
  std::string error;
  if (!runner_->Start(&error)) throw AgentError("probes: " + error);
  spdlog::info("scheduled {} probe job(s) over {} rail(s)", jobs, probe_rails_.size());
}

}  // namespace rail

namespace rail {

std::string Agent::RenderLandingPage() const {
  sysfs::ReadErrors errors;
  ScrapeSnapshot snapshot(sources_, errors);
  const auto verdicts = health::EvaluateSnapshot(snapshot);
  std::vector<probe::SeriesState> current;
  for (const auto& state : verdicts.series) {
    if (results_->IsCurrent(state)) current.push_back(state);
  }
  const auto& build = GetBuildInfo();
  LandingPage page;
  page.version = build.version;
  page.revision = build.revision;
  page.ucx_version = build.ucx_version;
  page.telemetry_path = options_.web.telemetry_path;
  page.sysfs_root = options_.sysfs_root;
  page.has_rdma_devices = !snapshot.Devices().empty();
  page.rails = BuildLandingRows(snapshot.Rails(), snapshot.Devices(), snapshot.NetDevices(),
                                current, verdicts.checks, verdicts.addresses);
  page.host_failing = HostFailingChecks(page.rails, verdicts.checks);
  return rail::RenderLandingPage(page);
}

}  // namespace rail
