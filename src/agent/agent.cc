#include "rail/agent.h"

#include <spdlog/spdlog.h>

#include <regex>

#include "rail/collector_set.h"
#include "rail/sysfs/filesystem.h"

namespace rail {
namespace {

bool Enabled(const std::vector<std::string>& names, const char* name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::regex CompileDeviceRegex(const std::string& pattern, const char* flag) {
  try {
    return std::regex(pattern, std::regex::extended);
  } catch (const std::regex_error& error) {
    throw AgentError(std::string("--collector.infiniband.") + flag + ": invalid regex '" +
                     pattern + "': " + error.what());
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

  SnapshotSources sources;
  sources.sys = sys_.get();
  sources.proc = proc_.get();
  sources.self_proc = self_proc_.get();
  sources.config = &config_;
  sources.infiniband.device_filter = MakeDeviceFilter(options_.device_include,
                                                      options_.device_exclude);
  // Only what an enabled collector publishes is read: GIDs also name a rail's netdev and IPv4.
  sources.infiniband.counters = Enabled(options_.collectors, "infiniband");
  sources.infiniband.hw_counters = Enabled(options_.collectors, "infiniband");
  sources.infiniband.gids =
      Enabled(options_.collectors, "gid") || Enabled(options_.collectors, "rails") ||
      Enabled(options_.collectors, "netclass");
  collectors_ = std::make_shared<CollectorSet>(sources, options_.collectors);

  {
    sysfs::ReadErrors errors;
    const auto devices = sysfs::ListInfinibandDevices(*sys_, errors);
    if (devices.empty()) {
      spdlog::warn("found no RDMA device under {}/class/infiniband: serving netdev and bond "
                   "inventory only",
                   options_.sysfs_root);
    } else {
      spdlog::info("found {} RDMA device(s) under {}/class/infiniband", devices.size(),
                   options_.sysfs_root);
    }
  }
  web_ = std::make_unique<WebServer>(options_.web, collectors_,
                                     [this] { return RenderLandingPage(); });
  std::string ports;
  for (int port : web_->ListeningPorts()) ports += (ports.empty() ? "" : ",") + std::to_string(port);
  spdlog::info("listening on port(s) {}, metrics at {}", ports, options_.web.telemetry_path);
}

Agent::~Agent() = default;

std::vector<int> Agent::ListeningPorts() const { return web_->ListeningPorts(); }

}  // namespace rail
