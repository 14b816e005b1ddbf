#include "rail/agent/probe_wiring.h"

#include "rail/agent/agent.h"
#include "rail/agent/probing.h"
#include "rail/base/build_info.h"
#include "rail/peer/client.h"
#include "rail/probe/ucx_version.h"

namespace rail::agent {

std::vector<probe::ProbeRail> LocalProbeRails(const sysfs::Filesystem& sys,
                                              const AgentConfig& config,
                                              const DeviceFilter& filter) {
  sysfs::ReadErrors errors;
  sysfs::InfinibandReadOptions read;
  read.counters = false;
  read.hw_counters = false;
  read.device_filter = filter;
  return MakeProbeRails(inventory::DiscoverRails(sysfs::ReadInfiniband(sys, read, errors),
                                                 config.rails, config.DiscoverUnlisted()));
}

std::shared_ptr<const peer::Secret> LoadSecret(const std::optional<std::string>& path,
                                               const std::string& what) {
  if (!path) return nullptr;
  std::string error;
  auto secret = peer::LoadSecretFile(*path, &error);
  if (!secret) throw AgentError(what + ": " + error);
  return secret;
}

peer::AgentVersions OurVersions() {
  return {base::GetBuildInfo().version, probe::UcxRuntimeVersion()};
}

ProbeWiring::ProbeWiring(const sysfs::Filesystem& sys, std::vector<probe::ProbeRail> rails,
                         std::shared_ptr<const peer::Secret> secret, const base::Clock& clock,
                         std::size_t remembered_nonces)
    : rails_(std::move(rails)),
      secret_(std::move(secret)),
      seen_responder_nonces_(
          std::make_unique<peer::ReplayCache>(clock, remembered_nonces, std::chrono::hours(1))),
      counters_(std::make_unique<probe::RailCounterReader>(sys)) {}

probe::ProbeContext ProbeWiring::Context() const {
  probe::ProbeContext context;
  context.connect = peer::MakePeerConnector(secret_, OurVersions(), *seen_responder_nonces_);
  context.counters = counters_.get();
  context.all_rails = rails_;
  return context;
}

}  // namespace rail::agent
