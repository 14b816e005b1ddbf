#include "rail/probing/wiring.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "rail/base/build_info.h"
#include "rail/peer/client.h"
#include "rail/probe/handler_factory.h"
#include "rail/probe/ucx_quirks.h"
#include "rail/probing/plan.h"

namespace rail::probing {

namespace {

std::vector<sysfs::InfinibandDevice> ReadDevices(const sysfs::Filesystem& sys,
                                                 const DeviceFilter& filter) {
  sysfs::ReadErrors errors;
  sysfs::InfinibandReadOptions read;
  read.counters = false;
  read.hw_counters = false;
  read.device_filter = filter;
  return sysfs::ReadInfiniband(sys, read, errors);
}

}  // namespace

std::vector<probe::ProbeRail> LocalProbeRails(const sysfs::Filesystem& sys,
                                              const ProbingConfig& config,
                                              const DeviceFilter& filter) {
  const auto devices = ReadDevices(sys, filter);
  const auto rails = inventory::DiscoverRails(devices, config.rails, config.DiscoverUnlisted());
  std::vector<probe::ProbeRail> probe_rails = MakeProbeRails(rails);
  // A line rate of the plan's making: a port that retrains later is read again at the next plan
  // (a reload, a fleet epoch). The netdev's speed is not read: an RDMA port always has a rate.
  for (std::size_t index = 0; index < rails.size(); ++index) {
    probe_rails[index].line_rate =
        inventory::LineRate(rails[index], inventory::FindRailPort(devices, rails[index]), nullptr);
  }
  return probe_rails;
}

std::vector<std::string> UcxQuirkWorkaround(const sysfs::Filesystem& sys,
                                            const ProbingConfig& config, const DeviceFilter& filter,
                                            const std::string& worker_executable) {
  if (!config.ucx_device_quirk_workaround) return {};
  const std::string ucx_version =
      probe::QueryWorkerUcxVersion(probe::FindWorkerExecutable(worker_executable));
  const auto devices = ReadDevices(sys, filter);
  for (const auto& rail :
       inventory::DiscoverRails(devices, config.rails, config.DiscoverUnlisted())) {
    const auto device = std::find_if(devices.begin(), devices.end(),
                                     [&](const auto& d) { return d.name == rail.device; });
    if (device == devices.end()) continue;
    if (const auto quirk =
            probe::FindUcxDeviceQuirk(*device, rail.roce_v2_gid_index, ucx_version)) {
      const std::string& setting = probe::UcxQuirkSettings().front();
      spdlog::warn(
          "ucx_device_quirk_workaround: the probe worker runs with {} ({}). Only the worker: "
          "the ucx_device_quirk check stays failing until every UCX application on this host "
          "has the setting",
          setting, quirk->Describe());
      return {setting};
    }
  }
  return {};
}

std::shared_ptr<const peer::Secret> LoadSecret(const std::optional<std::string>& path,
                                               const std::string& what) {
  if (!path) return nullptr;
  std::string error;
  auto secret = peer::LoadSecretFile(*path, &error);
  if (!secret) throw ConfigError(what + ": " + error);
  return secret;
}

ProbeWiring::ProbeWiring(const sysfs::Filesystem& sys, std::vector<probe::ProbeRail> rails,
                         std::shared_ptr<const peer::Secret> secret, const base::Clock& clock,
                         std::size_t remembered_nonces, WorkerSettings worker)
    : rails_(std::move(rails)),
      secret_(std::move(secret)),
      clock_(clock),
      seen_responder_nonces_(
          std::make_unique<peer::ReplayCache>(clock, remembered_nonces, std::chrono::hours(1))),
      counters_(std::make_unique<probe::RailCounterReader>(sys)),
      worker_settings_(std::move(worker)) {
  worker_settings_.executable = probe::FindWorkerExecutable(worker_settings_.executable);
}

ProbeWiring::~ProbeWiring() = default;

peer::AgentVersions ProbeWiring::Versions() const {
  if (const auto* worker = this->worker()) {
    if (auto version = worker->Status().ucx_version; !version.empty()) ucx_version_ = version;
  }
  if (ucx_version_.empty())
    ucx_version_ = probe::QueryWorkerUcxVersion(worker_settings_.executable);
  return {base::GetBuildInfo().version, ucx_version_};
}

void ProbeWiring::StartWorker(const std::atomic<bool>* abandon) {
  probe::ProbeWorker* worker = nullptr;
  {
    std::lock_guard lock(worker_mutex_);
    if (worker_) return;
    probe::WorkerOptions options;
    options.executable = worker_settings_.executable;
    options.environment = worker_settings_.environment;
    options.init.secret = secret_;
    options.init.agent_version = base::GetBuildInfo().version;
    options.init.sysfs_root = worker_settings_.sysfs_root;
    options.init.rails = rails_;
    options.init.log_level = worker_settings_.log_level;
    options.init.log_format = worker_settings_.log_format;
    options.init.cuda_library = worker_settings_.cuda_library;
    options.clock = &clock_;
    worker_ = std::make_unique<probe::ProbeWorker>(std::move(options));
    worker = worker_.get();
  }
  if (std::string error; !worker->Start(&error, abandon)) {
    spdlog::error("probe worker: {}; probes over UCX fail with worker_unavailable until it runs",
                  error);
  }
}

const probe::ProbeWorker* ProbeWiring::worker() const {
  std::lock_guard lock(worker_mutex_);
  return worker_.get();
}

probe::ProbeWorker* ProbeWiring::MutableWorker() const {
  std::lock_guard lock(worker_mutex_);
  return worker_.get();
}

void ProbeWiring::StopWorkerBy(const base::Deadline& by) {
  if (auto* worker = MutableWorker()) worker->StopBy(by);
}

void ProbeWiring::StopWorker() {
  if (auto* worker = MutableWorker()) worker->Stop();
}

probe::ProbeMaker ProbeWiring::Probes() {
  if (auto* worker = MutableWorker()) return probe::WorkerProbeMaker(*worker);
  return probe::MakeTcpProbe;  // the UCX kinds need the worker: nullptr for them
}

peer::ProbeHandlerFactory ProbeWiring::Handlers() {
  StartWorker();
  return probe::MakeProbeHandlerFactory(
      rails_, [worker = MutableWorker()](probe::ProbeKind kind, const auto& rails) {
        return probe::MakeWorkerHandler(*worker, kind, rails);
      });
}

probe::ProbeContext ProbeWiring::Context() const {
  probe::ProbeContext context;
  peer::ClientOptions client;
  client.secret = secret_;
  client.versions = Versions();
  client.seen_responder_nonces = seen_responder_nonces_.get();
  client.clock = &clock_;  // the control connection's deadlines; the probe measures on its own
  context.connect = peer::MakePeerConnector(std::move(client));
  context.counters = counters_.get();
  context.all_rails = rails_;
  return context;
}

}  // namespace rail::probing
