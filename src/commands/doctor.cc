// `rail_exporter doctor`: one snapshot of the host, the worker's capabilities and (with --peer) a
// peer's hello, through health::EvaluateSnapshot; each verdict becomes a finding with its evidence
// and remedy. The INFO findings are facts a person needs beside the verdicts (the GID index to
// pass to UCX, the GPUs and their nearest NICs, what the worker could load), never verdicts.
#include "rail/commands/doctor.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "commands/doctor_fleet.h"
#include "commands/doctor_neighbors.h"
#include "rail/agent/config.h"
#include "rail/base/build_info.h"
#include "rail/base/clock.h"
#include "rail/commands/command_setup.h"
#include "rail/gpu/gpudirect.h"
#include "rail/health/evidence.h"
#include "rail/health/remedies.h"
#include "rail/health/snapshot_checks.h"
#include "rail/inventory/snapshot.h"
#include "rail/nic/dcb.h"
#include "rail/peer/client.h"
#include "rail/probe/result_store.h"
#include "rail/probe/ucx_quirks.h"
#include "rail/probe/worker.h"
#include "rail/probing/wiring.h"
#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/read_errors.h"

namespace rail::commands {

namespace {

constexpr std::chrono::seconds kPeerTimeout{5};

Finding FromVerdict(const health::CheckResult& verdict, inventory::Snapshot& snapshot) {
  Finding finding;
  // A held-back check is no pass: doctor says why it could not judge.
  finding.status = verdict.held_back ? FindingStatus::kInfo
                   : verdict.ok      ? FindingStatus::kPass
                                     : FindingStatus::kFail;
  finding.check = verdict.check;
  finding.rail = verdict.rail;
  finding.peer = verdict.peer;
  finding.summary =
      verdict.ok && !verdict.held_back ? health::CheckSummary(verdict.check) : verdict.reason;
  finding.evidence = health::Evidence(verdict, snapshot.Rails(), snapshot.Topology());
  if (!verdict.ok) finding.fix = health::Remedy(verdict, snapshot.Rails(), &snapshot.Topology());
  return finding;
}

Finding Info(std::string check, std::string rail, std::string summary, std::string evidence) {
  Finding finding;
  finding.check = std::move(check);
  finding.rail = std::move(rail);
  finding.summary = std::move(summary);
  finding.evidence = std::move(evidence);
  return finding;
}

// Per rail, what its NIC's `ethtool -S` gives the agent, and why it has no temperature when it has
// none. The fabric checks judged over a window need two samples: doctor, one look, leaves them to
// the agent.
void NicFabric(inventory::Snapshot& snapshot, std::vector<Finding>& out) {
  const auto release = snapshot.PeerMemory().kernel_release.value_or("unknown");
  for (const auto& rail : snapshot.Rails()) {
    if (rail.netdev.empty()) continue;
    std::string statistics;
    for (const auto& [name, reading] : snapshot.Fabric()) {
      if (name != rail.name) continue;
      statistics += (statistics.empty() ? "" : "; ") + nic::DescribeReading(reading);
    }
    out.push_back(Info("ethtool", rail.name,
                       statistics.empty() ? "no ethtool statistics for " + rail.netdev +
                                                " (no such netdev here, no recorded dump, or "
                                                "its driver lists none)"
                                          : statistics + "; the agent judges them over its window",
                       "ethtool -S " + rail.netdev));
    const auto& temperatures = snapshot.NicTemperatures();
    const bool measured = std::any_of(temperatures.begin(), temperatures.end(),
                                      [&](const auto& sensor) { return sensor.rail == rail.name; });
    if (measured) continue;
    out.push_back(Info("nic_temperature", rail.name,
                       "no temperature: no hwmon device belongs to this rail's NIC (mlx5 registers "
                       "one only on kernels newer than Debian 12's 6.1; kernel release: " +
                           release + ")",
                       "sysfs class/hwmon/*/device; ethtool -m " + rail.netdev +
                           " for the transceiver's own temperature"));
  }
}

// The RoCE v2 GID index of each rail's IPv4 address: what UCX_IB_GID_INDEX must name, unless
// our UCX fails with that GID on the rail's device (ucx_device_quirk says why and what instead).
void GidIndexes(inventory::Snapshot& snapshot, const std::string& ucx_version,
                std::vector<Finding>& out) {
  for (const auto& rail : snapshot.Rails()) {
    const auto* port = inventory::FindRailPort(snapshot.Devices(), rail);
    if (port == nullptr || rail.link_layer != "Ethernet") continue;
    const auto* gid = inventory::PortIpv4Gid(*port, rail.netdev);
    if (gid == nullptr) continue;  // roce_gid says so
    std::string advice =
        fmt::format("UCX_IB_GID_INDEX={} (mpirun -x UCX_IB_GID_INDEX={})", gid->index, gid->index);
    for (const auto& device : snapshot.Devices()) {
      const auto quirk = probe::FindUcxDeviceQuirk(device, gid->index, ucx_version);
      if (device.name != rail.device || !quirk) continue;
      advice = fmt::format("but UCX {} on {} fails with it (ucx_device_quirk): set {} or {}",
                           ucx_version, quirk->driver, probe::UcxQuirkSettings()[0],
                           probe::UcxQuirkSettings()[1]);
    }
    out.push_back(Info(
        "roce_gid_index", rail.name,
        fmt::format("RoCE v2 GID index {} carries {} on {}: {}", gid->index, rail.ipv4, rail.netdev,
                    advice),
        health::PortEvidence(&rail, fmt::format("gids/{0}, gid_attrs/types/{0}", gid->index))));
  }
}

std::string GpuLine(const inventory::PcieTopology& topology, const inventory::Gpu& gpu,
                    const probe::WorkerCapabilities* capabilities) {
  const gpu::CudaDevice* cuda = nullptr;
  if (capabilities != nullptr) {
    for (const auto& device : capabilities->cuda.devices) {
      if (device.pci_bus_id == gpu.pci_bus_id) cuda = &device;
    }
  }
  const std::string name = cuda != nullptr ? " " + cuda->name : std::string();
  if (gpu::IsIntegrated(&gpu, cuda)) {
    return fmt::format(
        "GPU {}{} is integrated ({}): no GPUDirect RDMA exists there; pinned host "
        "memory (cuda_host) is the fast path",
        gpu.pci_bus_id, name, inventory::GpuAttachName(gpu.attach));
  }
  const auto* nearest = inventory::NearestDevice(topology, gpu.pci_bus_id);
  if (nearest == nullptr) return fmt::format("GPU {}{}: no RDMA device", gpu.pci_bus_id, name);
  const auto* path = inventory::FindPath(topology, gpu.pci_bus_id, nearest->device);
  return fmt::format("GPU {}{}: nearest RDMA device {} ({})", gpu.pci_bus_id, name, nearest->device,
                     path ? inventory::PciPathName(path->path) : "?");
}

void Gpus(inventory::Snapshot& snapshot, const probe::WorkerCapabilities* capabilities,
          std::vector<Finding>& out) {
  const auto& topology = snapshot.Topology();
  for (const auto& gpu : topology.gpus) {
    out.push_back(Info("gpu", "", GpuLine(topology, gpu, capabilities),
                       "sysfs bus/pci/devices/" + gpu.pci_bus_id));
  }
}

// The rails qos_config cannot judge (no DCB on the netdev), and why: no verdict is not a pass.
// DCB netlink answers for this host's netdevs, so a tree other than the live /sys is not asked.
void QosUnjudged(inventory::Snapshot& snapshot, bool this_host, std::vector<Finding>& out) {
  const auto& rails = snapshot.Rails();
  const bool ethernet = std::any_of(rails.begin(), rails.end(), [](const inventory::Rail& rail) {
    return !rail.netdev.empty() && rail.link_layer != "InfiniBand";
  });
  if (!this_host) {
    if (ethernet) {
      out.push_back(Info("qos_config", "",
                         "not judged: --path.sysfs is not this host's /sys, and DCB netlink "
                         "answers for this host's netdevs",
                         "DCB netlink (dcb pfc show; dcb app show)"));
    }
    return;
  }
  for (const auto& qos : snapshot.Qos()) {
    if (auto why = health::QosConfigUnjudged(qos); !why.empty()) {
      out.push_back(Info(
          "qos_config", qos.rail, "not judged: " + why,
          fmt::format("DCB netlink (dcb pfc show dev {0}; dcb app show dev {0})", qos.netdev)));
    }
  }
}

// Files that could not be read: a verdict resting on them may be missing or say less.
// duplicate_subnet compares the addresses of this host's interfaces (getifaddrs): a tree other
// than the live /sys (a fixture, a copy from another host) has none of its own to compare.
void SubnetsOfAnotherTree(const std::string& sysfs_root, std::vector<Finding>& out) {
  std::error_code error;
  if (std::filesystem::equivalent(sysfs_root, "/sys", error)) return;
  Finding finding;
  finding.check = "duplicate_subnet";
  finding.summary =
      "not judged: --path.sysfs is not this host's /sys, and interface addresses are this host's";
  finding.evidence = "the interfaces' IPv4 addresses (getifaddrs)";
  out.push_back(std::move(finding));
}

void ReadProblems(const sysfs::ReadErrors& errors, std::vector<Finding>& out) {
  for (const auto& problem : errors.problems()) {
    out.push_back(
        Info("read_error", "",
             fmt::format("{}: {}{}", problem.path, sysfs::ReadFailureName(problem.failure),
                         problem.detail.empty() ? "" : " (" + problem.detail + ")"),
             "sysfs " + problem.path));
  }
}

Finding CapabilitiesFinding(const std::optional<probe::WorkerCapabilities>& capabilities,
                            const std::string& error) {
  const std::string evidence = "rail_exporter_probe_worker --capabilities";
  if (!capabilities) {
    return Info("capabilities", "",
                "the probe worker did not answer (" + error +
                    "): the GPU checks that need the driver say nothing",
                evidence);
  }
  const auto& cuda = capabilities->cuda;
  const std::string driver =
      cuda.loaded ? fmt::format("CUDA driver {}.{} with {} GPU(s)", cuda.driver_version / 1000,
                                cuda.driver_version % 1000 / 10, cuda.devices.size())
                  : "no CUDA driver (" + cuda.error + ")";
  const std::string ucx =
      capabilities->ucx_memory_types_known
          ? fmt::format("UCX memory types: {}", fmt::join(capabilities->ucx_memory_types, ", "))
          : "UCX memory types unknown";
  return Info("capabilities", "", driver + "; " + ucx, evidence);
}

// With --peer: connects and records the hello as a result over no rail, answered or not. health
// judges it (peer_hello), and the peer checks read the versions and MTUs of an answered one (a
// failed run: the probe-derived checks skip it).
void AskPeer(const DoctorOptions& options, const agent::AgentConfig& config,
             const sysfs::Filesystem& sys, probe::ResultStore& store) {
  if (options.peer.empty()) return;
  const auto secret_file = CommandSetup::SecretFile(options.secret_file, config);
  if (!secret_file && !options.insecure) {
    throw std::runtime_error("--peer needs --peer.secret-file (or --peer.insecure)");
  }
  probing::ProbeWiring wiring(
      sys, {}, probing::LoadSecret(secret_file, "secret file"), base::SystemClock(), 16,
      probing::WorkerSettings{options.worker_path, options.sysfs_root, "warn", "logfmt"});
  probe::ProbeResult hello;
  hello.kind = probe::ProbeKind::kTcpRtt;
  hello.peer = options.peer;
  hello.error_reason = "hello_only";
  const auto client = wiring.Context().connect(options.peer, kPeerTimeout, &hello.error_reason,
                                               &hello.error_message);
  hello.finished_at = std::chrono::system_clock::now();
  if (client) {
    hello.peer_agent_version = client->peer_versions().agent_version;
    hello.peer_ucx_version = client->peer_versions().ucx_version;
    hello.peer_rail_mtus = client->peer_rail_mtus();
  }
  store.Record(std::move(hello), std::chrono::milliseconds(0));
}

void CheckRoot(const std::string& root, const char* flag) {
  std::error_code error;
  if (!std::filesystem::is_directory(root, error)) {
    throw std::invalid_argument(fmt::format("{}: cannot read {}", flag, root));
  }
}

std::vector<Finding> Diagnose(const DoctorOptions& options) {
  // procfs may be absent (a fixture tree without proc/): only the bonds' files are read there.
  CheckRoot(options.sysfs_root, "--path.sysfs");
  const agent::AgentConfig config = CommandSetup::LoadConfig(options.config_file);
  sysfs::RootedFilesystem sys(options.sysfs_root);
  sysfs::RootedFilesystem proc(options.procfs_root);
  probe::ResultStore store;
  std::vector<Finding> findings;
  AskPeer(options, config, sys, store);

  const auto worker = probe::FindWorkerExecutable(options.worker_path);
  std::string capabilities_error;
  const auto capabilities = probe::QueryWorkerCapabilities(
      worker, &capabilities_error, options.cuda_library, options.sysfs_root);

  inventory::Sources sources;
  sources.sys = &sys;
  sources.proc = &proc;
  sources.rails = config.probing.rails;
  sources.discover_unlisted = config.probing.DiscoverUnlisted();
  sources.fabric = true;
  std::unique_ptr<sysfs::RootedFilesystem> ethtool_dumps;
  std::unique_ptr<nic::DumpStatisticsSource> recorded;
  if (!options.ethtool_root.empty()) {
    ethtool_dumps = std::make_unique<sysfs::RootedFilesystem>(options.ethtool_root);
    recorded = std::make_unique<nic::DumpStatisticsSource>(*ethtool_dumps);
    sources.nic_statistics = recorded.get();
  }
  std::error_code error;
  const bool this_host = std::filesystem::equivalent(options.sysfs_root, "/sys", error);
  const nic::NetlinkDcbReader dcb;
  sources.dcb = &dcb;
  sources.qos = this_host;
  sysfs::ReadErrors errors;
  inventory::Snapshot snapshot(sources, errors);
  health::Context context;
  context.thresholds = config.health;
  context.figures = config.probing.figures;
  context.results = &store;
  context.interface_addresses = health::ReadInterfaceAddresses;
  context.own_agent_version = base::GetBuildInfo().version;
  context.own_ucx_version = probe::QueryWorkerUcxVersion(worker);
  context.capabilities = [&capabilities] { return capabilities; };
  for (const auto& verdict :
       health::EvaluateSnapshot(snapshot, context, context.counter_history->Readings()).checks) {
    findings.push_back(FromVerdict(verdict, snapshot));
  }
  SubnetsOfAnotherTree(options.sysfs_root, findings);
  GidIndexes(snapshot, context.own_ucx_version, findings);
  NicFabric(snapshot, findings);
  QosUnjudged(snapshot, this_host, findings);
  if (this_host) NeighborFindings(snapshot, options.lldpd_socket, findings);
  Gpus(snapshot, capabilities ? &*capabilities : nullptr, findings);
  findings.push_back(CapabilitiesFinding(capabilities, capabilities_error));
  ReadProblems(errors, findings);
  for (auto& finding : FleetFindings(config)) findings.push_back(std::move(finding));
  return findings;
}

}  // namespace

int RunDoctor(const DoctorOptions& options, std::ostream& out, std::ostream& err) {
  const CommandSetup setup("doctor", err);
  if (!setup.OutputIsOneOf(options.output, {"text", "json"})) return kExitCouldNotRun;
  return setup.Run([&] {
    const std::vector<Finding> findings = Diagnose(options);
    out << (options.output == "json" ? FormatDoctorJson(findings) : FormatDoctorText(findings));
    const bool failed = std::any_of(findings.begin(), findings.end(), [](const Finding& finding) {
      return finding.status == FindingStatus::kFail;
    });
    return failed ? kExitFailed : kExitOk;
  });
}

}  // namespace rail::commands
