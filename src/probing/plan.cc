#include "rail/probing/plan.h"

#include <netinet/in.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "rail/base/interface_addresses.h"
#include "rail/probe/result_store.h"
#include "rail/probe/skipped.h"
#include "rail/probe/worker.h"

namespace rail::probing {
namespace {

// The IPv4 address of a live interface, for netdev rails configured without one.
std::string InterfaceIpv4(const std::string& netdev) {
  if (netdev.empty()) return {};
  for (const base::InterfaceAddress& address : base::ReadInterfaceAddresses()) {
    if (address.family == AF_INET && address.interface == netdev) return address.address;
  }
  return {};
}

std::uint64_t ExpectedBytes(const ProbeConfig& config, const std::vector<probe::ProbeRail>& rails) {
  if (config.max_bytes) return *config.max_bytes;
  // Without a declared bound, assume every rail runs at 100 Gbit/s for the whole duration: an
  // overestimate on slower rails keeps the budget on the safe side.
  const double seconds = std::chrono::duration<double>(config.duration).count();
  return static_cast<std::uint64_t>(seconds * 12.5e9 * static_cast<double>(rails.size()));
}

}  // namespace

std::vector<probe::ProbeRail> MakeProbeRails(const std::vector<inventory::Rail>& rails) {
  std::vector<probe::ProbeRail> probe_rails;
  for (const auto& rail : rails) {
    probe::ProbeRail probe_rail;
    probe_rail.name = rail.name;
    probe_rail.netdev = rail.netdev;
    probe_rail.rdma_device = rail.device;
    probe_rail.rdma_port = rail.port;
    probe_rail.ucx_device =
        rail.device.empty() ? rail.netdev : rail.device + ":" + std::to_string(rail.port);
    probe_rail.ipv4 = rail.ipv4.empty() ? InterfaceIpv4(rail.netdev) : rail.ipv4;
    probe_rail.expect_rdma = rail.transport == inventory::TransportClass::kRdma;
    probe_rails.push_back(std::move(probe_rail));
  }
  return probe_rails;
}

std::vector<std::uint64_t> DefaultMessageSizes(probe::ProbeKind kind) {
  switch (kind) {
    case probe::ProbeKind::kUcxRtt:
      return {8, 4096};
    case probe::ProbeKind::kTcpRtt:
      return {8};
    case probe::ProbeKind::kTcpThroughput:
      return {128 * 1024};
    default:
      return {1 << 20};
  }
}

std::vector<std::vector<probe::ProbeRail>> RunsOver(probe::ProbeKind kind,
                                                    const std::vector<probe::ProbeRail>& rails) {
  std::vector<std::vector<probe::ProbeRail>> runs;
  if (probe::IsMultiRail(kind)) {
    runs.push_back(rails);
  } else {
    for (const auto& rail : rails) runs.push_back({rail});
  }
  return runs;
}

namespace {

// The rails a probes[] entry names (all when it names none). Throws ConfigError naming the entry.
std::vector<probe::ProbeRail> EntryRails(const ProbeConfig& entry, const std::string& key,
                                         const std::vector<probe::ProbeRail>& rails) {
  std::vector<probe::ProbeRail> selected;
  if (entry.rails.empty()) selected = rails;
  for (const auto& name : entry.rails) {
    const auto rail =
        std::find_if(rails.begin(), rails.end(), [&name](const auto& r) { return r.name == name; });
    if (rail == rails.end())
      throw ConfigError(key + ".rails: this host has no rail '" + name + "'");
    selected.push_back(*rail);
  }
  if (selected.empty()) throw ConfigError(key + ": this host has no rail to probe");
  return selected;
}

bool FollowsPlan(const ProbingConfig& config, const ProbeConfig& entry) {
  return config.fleet && entry.peers.empty();
}

bool ProbesPeer(const ProbeConfig& entry, const PeerConfig& peer) {
  return entry.peers.empty() ||
         std::find(entry.peers.begin(), entry.peers.end(), peer.name) != entry.peers.end();
}

// One job: the entry's kind against `peer` over `rails`.
PlannedProbe PlanJob(const ProbeConfig& entry, probe::ProbeKind kind, const PeerConfig& peer,
                     const std::vector<probe::ProbeRail>& rails) {
  PlannedProbe planned;
  auto& params = planned.params;
  params.kind = kind;
  params.peer = peer.address;
  params.rails = rails;
  params.operation = *probe::ParseUcxOperation(entry.operation);
  params.message_sizes_bytes =
      entry.message_sizes_bytes.empty() ? DefaultMessageSizes(kind) : entry.message_sizes_bytes;
  params.window = entry.window;
  params.streams = entry.streams;
  params.duration = entry.duration;
  params.timeout = entry.timeout;
  params.ucx_transports = entry.transports;
  params.memory = entry.memory;
  planned.interval = entry.interval;

  auto& job = planned.job;
  for (const auto& rail : rails) job.rails.push_back(rail.name);
  job.name = entry.kind + "/" + peer.name + "/" + probe::RailLabel(job.rails);
  // Host and GPU-memory runs of one kind are two jobs (and two series).
  if (entry.memory != gpu::MemoryType::kHost) {
    job.name += std::string("/") + gpu::MemoryTypeName(entry.memory);
  }
  job.kind = entry.kind;
  job.peer = peer.name;
  job.load = probe::IsBulk(kind) ? schedule::ProbeLoad::kBulk : schedule::ProbeLoad::kLatency;
  job.interval = entry.interval;
  job.jitter_fraction = entry.jitter;
  // Every size runs in turn, each bounded by the probe's timeout.
  const auto sizes = params.message_sizes_bytes.size();
  job.timeout = entry.timeout * static_cast<int>(sizes) + std::chrono::seconds(1);
  // A UCX run that finds the probe worker restarting waits for it (its first size only, see
  // RunProbeSizes), holding its rails meanwhile.
  if (probe::NeedsUcx(kind)) job.start_allowance = probe::WorkerPolicy{}.max_restart_wait;
  job.expected_bytes = probe::IsBulk(kind) ? ExpectedBytes(entry, rails) * sizes : 0;
  return planned;
}

}  // namespace

std::vector<PlannedProbe> PlanProbes(const ProbingConfig& config,
                                     const std::vector<probe::ProbeRail>& rails) {
  std::vector<PlannedProbe> plan;
  for (std::size_t i = 0; i < config.probes.size(); ++i) {
    const auto& entry = config.probes[i];
    const std::string key = "probes[" + std::to_string(i) + "]";
    if (FollowsPlan(config, entry)) continue;
    const auto kind = *probe::ParseProbeKind(entry.kind);
    const auto selected = EntryRails(entry, key, rails);
    if (probe::IsMultiRail(kind) && selected.size() < 2) {
      spdlog::warn("{}: {} over a single rail measures that rail only", key, entry.kind);
    }
    for (const auto& peer : config.peers) {
      if (!ProbesPeer(entry, peer)) continue;
      for (const auto& group : RunsOver(kind, selected)) {
        plan.push_back(PlanJob(entry, kind, peer, group));
      }
    }
  }
  return plan;
}

std::vector<PlannedProbe> PlanFleetProbes(const ProbingConfig& config,
                                          const std::vector<probe::ProbeRail>& rails,
                                          const std::vector<fleet::PlannedPair>& pairs) {
  std::vector<PlannedProbe> plan;
  for (std::size_t i = 0; i < config.probes.size(); ++i) {
    const auto& entry = config.probes[i];
    if (!FollowsPlan(config, entry)) continue;
    const auto kind = *probe::ParseProbeKind(entry.kind);
    const auto selected = EntryRails(entry, "probes[" + std::to_string(i) + "]", rails);
    for (const auto& pair : pairs) {
      const PeerConfig peer{pair.peer, pair.peer};
      if (probe::IsMultiRail(kind)) {
        if (pair.rail == selected.front().name)
          plan.push_back(PlanJob(entry, kind, peer, selected));
        continue;
      }
      for (const auto& rail : selected) {
        if (rail.name == pair.rail) plan.push_back(PlanJob(entry, kind, peer, {rail}));
      }
    }
  }
  return plan;
}

std::size_t MaxFleetProbeSeries(const ProbingConfig& config,
                                const std::vector<probe::ProbeRail>& rails) {
  if (!config.fleet) return 0;
  std::size_t series = 0;
  for (std::size_t i = 0; i < config.probes.size(); ++i) {
    const auto& entry = config.probes[i];
    if (!FollowsPlan(config, entry)) continue;
    const auto kind = *probe::ParseProbeKind(entry.kind);
    const auto selected = EntryRails(entry, "probes[" + std::to_string(i) + "]", rails);
    const auto sizes = entry.message_sizes_bytes.empty() ? DefaultMessageSizes(kind).size()
                                                         : entry.message_sizes_bytes.size();
    const auto rail_runs = probe::IsMultiRail(kind) ? 1 : selected.size();
    series += config.fleet->peers_per_rail * rail_runs * sizes;
  }
  return series;
}

std::vector<probe::ProbeResult> RunProbeSizes(probe::Probe& probe, const probe::ProbeParams& params,
                                              const probe::ProbeContext& context) {
  std::vector<probe::ProbeResult> results;
  probe::ProbeContext each = context;
  for (const auto size : params.message_sizes_bytes) {
    probe::ProbeParams one = params;
    one.message_sizes_bytes = {size};
    auto result = probe.Run(one, each);
    // One wait for a restarting worker per run, as its scheduler allows (ProbeJob's
    // start_allowance): a later size that finds no worker is skipped at once.
    each.wait_for_worker = false;
    result.message_size_bytes = size;
    // The next sizes would be refused busy, or find no worker, alike.
    const bool not_run = probe::IsBusy(result) || probe::IsSkipped(result);
    results.push_back(std::move(result));
    if (not_run || (context.cancel != nullptr && context.cancel->load())) break;
  }
  return results;
}

}  // namespace rail::probing
