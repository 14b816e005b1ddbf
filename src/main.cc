// Command line of rail_exporter. Flags follow node_exporter's conventions. Everything but flag
// parsing and signal handling lives in the library (rail/agent/agent.h).
#include <malloc.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <map>
#include <optional>

#include "rail/agent/agent.h"
#include "rail/base/build_info.h"
#include "rail/base/log.h"
#include "rail/base/memory.h"
#include "rail/collectors/collector.h"
#include "rail/commands/doctor.h"
#include "rail/commands/lifecycle.h"
#include "rail/commands/plan_command.h"
#include "rail/commands/probe_command.h"
#include "rail/probe/worker.h"

namespace {

struct CommandLine {
  rail::agent::AgentOptions options;
  std::string log_level = "info";
  std::string log_format = "logfmt";
  std::string config_file;
  std::string gid_refresh = "5m";
  std::string gid_entries = "roce-v2-ipv4";
  bool show_version = false;
  bool disable_defaults = false;
  std::map<std::string, bool> enabled;  // by collector
  std::map<std::string, const CLI::Option*> collector_flags;
  rail::commands::ProbeCommandOptions probe;
  std::string probe_duration;  // empty: ProbeCommandOptions' own default (probing::ProbeConfig's)
  std::string probe_timeout = "0s";
  CLI::App* probe_command = nullptr;
  rail::commands::DoctorOptions doctor;
  CLI::App* doctor_command = nullptr;
  rail::commands::PlanCommandOptions plan;
  // The plan's numbers as given; each counts only when its flag was (else the configuration's).
  std::string plan_self;
  std::uint64_t plan_epoch = 0;
  unsigned plan_peers_per_rail = rail::fleet::kDefaultPeersPerRail;
  std::uint64_t plan_seed = 0;
  std::map<std::string, const CLI::Option*> plan_flags;
  CLI::App* plan_command = nullptr;
};

void AddAgentFlags(CLI::App& app, CommandLine& cl) {
  app.add_option("--web.listen-address", cl.options.web.listen_addresses,
                 "Address to listen on for metrics and the landing page ([host]:port); may be "
                 "repeated")
      ->default_val(":9840");
  app.add_option("--web.telemetry-path", cl.options.web.telemetry_path,
                 "Path under which to expose metrics");
  app.add_option("--web.config.file", cl.options.web.config_file,
                 "Web config file (exporter-toolkit format): TLS and basic authentication");
  app.add_flag("--web.enable-lifecycle", cl.options.enable_lifecycle,
               "Reload the configuration on POST /-/reload (behind the web config's "
               "authentication); SIGHUP always reloads");
  app.add_option("--web.max-connections", cl.options.web.max_connections,
                 "HTTP connections held at once (a descriptor each, no thread); lowered at "
                 "start to what RLIMIT_NOFILE admits")
      ->check(CLI::PositiveNumber);
  app.add_option("--path.sysfs", cl.options.sysfs_root, "sysfs mountpoint (or a fixture tree)");
  app.add_option("--path.procfs", cl.options.procfs_root, "procfs mountpoint (or a fixture tree)");
  app.add_option("--path.ethtool", cl.options.ethtool_root,
                 "Recorded `ethtool -S` dumps (<netdev>, <netdev>.info) to read instead of asking "
                 "the kernel (a fixture tree's ethtool/)");
  app.add_option("--config.file", cl.config_file, "YAML configuration file (rails)");
  app.add_option("--collector.infiniband.device-include", cl.options.device_include,
                 "Regex of RDMA devices to read (others are not read at all)");
  app.add_option("--collector.infiniband.device-exclude", cl.options.device_exclude,
                 "Regex of RDMA devices not to read at all");
  app.add_option("--log.level", cl.log_level, "Log level: debug, info, warn, error");
  app.add_option("--log.format", cl.log_format, "Log format: logfmt or json");
  app.add_flag("--version", cl.show_version, "Print the version and exit");
  app.add_option("--collector.gid.refresh-interval", cl.gid_refresh,
                 "Re-read GID tables at least this often (e.g. 5m; 0s: every scrape); sooner "
                 "when an address or link of a netdev they name changes in this namespace");
  app.add_option("--collector.gid.entries", cl.gid_entries,
                 "GID entries rail_gid_info publishes: roce-v2-ipv4 (RoCE v2 entries with an "
                 "IPv4 address, and InfiniBand ports' entries) or all")
      ->check(CLI::IsMember({"roce-v2-ipv4", "all"}))
      ->capture_default_str();
  app.add_option("--collector.neighbor.lldpd-socket", cl.options.lldpd_socket,
                 "lldpd's control socket the neighbor collector asks (default: lldpd's own, "
                 "/run/lldpd.socket on Debian)");
  app.add_flag("--peer.insecure", cl.options.peer_insecure,
               "Accept and probe peers without a shared secret (lab use only)");
  app.add_option("--probe.worker-path", cl.options.probe_worker_path,
                 "The probe worker executable that runs UCX (default: "
                 "rail_exporter_probe_worker beside this executable)");
  app.add_option("--cuda.library", cl.options.cuda_library,
                 "The CUDA driver library the probe worker loads (default: libcuda.so.1; the "
                 "agent itself never loads it)");
}

void AddCollectorFlags(CLI::App& app, CommandLine& cl) {
  app.add_flag("--collector.disable-defaults", cl.disable_defaults,
               "Start with every collector disabled: only those enabled with "
               "--collector.<name> run");
  for (const auto& info : rail::collectors::KnownCollectors()) {
    cl.enabled[info.name] = info.enabled_by_default;
    cl.collector_flags[info.name] =
        app.add_flag("--collector." + info.name + ",!--no-collector." + info.name,
                     cl.enabled[info.name], "Enable the " + info.name + " collector: " + info.help);
  }
}

// The enabled collectors; with --collector.disable-defaults only those named on the command line.
std::vector<std::string> EnabledCollectors(const CommandLine& cl) {
  std::vector<std::string> names;
  for (const auto& [name, on] : cl.enabled) {
    const bool given = cl.collector_flags.at(name)->count() > 0;
    if (on && (given || !cl.disable_defaults)) names.push_back(name);
  }
  return names;
}

// The subcommands that speak to a peer (probe, doctor) take the secret the same way.
void AddSecretFileOption(CLI::App& command, std::optional<std::string>& secret_file) {
  command.add_option("--peer.secret-file", secret_file,
                     "Shared secret (default: the configuration's responder.secret_file)");
}

void AddProbeCommand(CLI::App& app, CommandLine& cl) {
  cl.probe_command = app.add_subcommand(
      "probe", "Run one probe against a peer agent now and print the result (rails as rows)");
  // --config.file, --path.sysfs and --peer.insecure may also follow `probe`.
  cl.probe_command->fallthrough();
  cl.probe_command->add_option("--peer", cl.probe.peer, "Peer agent's responder, HOST[:PORT]")
      ->required();
  cl.probe_command
      ->add_option("--kind", cl.probe.kind,
                   "ucx_throughput, ucx_rtt, multirail_capacity, "
                   "ucx_multirail_throughput, tcp_throughput or tcp_rtt")
      ->required();
  cl.probe_command->add_option("--rail", cl.probe.rails,
                               "Rail to probe (repeatable; default: all)");
  cl.probe_command->add_option("--output", cl.probe.output, "table or json");
  cl.probe_command->add_option("--operation", cl.probe.operation, "UCX operation: put, get, am");
  cl.probe_command->add_option("--size", cl.probe.message_sizes_bytes,
                               "Message size in bytes (repeatable; default: the kind's)");
  cl.probe_command->add_option("--window", cl.probe.window, "Outstanding UCX operations");
  cl.probe_command->add_option("--streams", cl.probe.streams, "Parallel TCP streams");
  cl.probe_command->add_option("--duration", cl.probe_duration,
                               "How long data moves, e.g. 2s (default: as in probes[])");
  cl.probe_command->add_option("--timeout", cl.probe_timeout,
                               "Hard end of the probe (0s: duration+10s)");
  cl.probe_command->add_option("--ucx-transports", cl.probe.ucx_transports,
                               "UCX_TLS for the probe (default: UCX's choice)");
  cl.probe_command->add_option("--memory", cl.probe.memory,
                               "Buffers on both sides: host, cuda or cuda_host (bulk UCX kinds)");
  AddSecretFileOption(*cl.probe_command, cl.probe.secret_file);
}

void AddDoctorCommand(CLI::App& app, CommandLine& cl) {
  cl.doctor_command = app.add_subcommand(
      "doctor",
      "Evaluate every check on this host now and print findings with their fixes "
      "(exit 0: all pass, 1: a check fails, 2: could not run)");
  // --path.sysfs, --path.procfs, --config.file, --probe.worker-path and --peer.insecure may also
  // follow `doctor`.
  cl.doctor_command->fallthrough();
  cl.doctor_command->add_option("--peer", cl.doctor.peer,
                                "Also ask this peer agent's responder for its versions and rail "
                                "MTUs, HOST[:PORT]");
  cl.doctor_command->add_option("--output", cl.doctor.output, "text or json");
  AddSecretFileOption(*cl.doctor_command, cl.doctor.secret_file);
}

void AddPlanCommand(CLI::App& app, CommandLine& cl) {
  cl.plan_command = app.add_subcommand(
      "plan",
      "Print the probes the fleet plan gives a host (peer, rail, kind), computed as every agent "
      "computes it; runs no probe (exit 0, or 2 with one line when it cannot)");
  // --path.sysfs and --config.file may also follow `plan`.
  cl.plan_command->fallthrough();
  cl.plan_command
      ->add_option("--peers-file", cl.plan.peers_file,
                   "The fleet's targets in file_sd format (JSON or YAML)")
      ->required();
  cl.plan_flags["self"] = cl.plan_command->add_option(
      "--self", cl.plan_self,
      "The host's target in the peers file, HOST:PORT (default: the configuration's fleet.self)");
  cl.plan_command
      ->add_option("--rails", cl.plan.rails,
                   "Rails to plan, comma-separated (default: this host's rails in sysfs)")
      ->delimiter(',');
  cl.plan_flags["epoch"] = cl.plan_command->add_option(
      "--epoch", cl.plan_epoch, "Epoch number (default: the epoch now, by fleet.epoch)");
  cl.plan_flags["peers-per-rail"] = cl.plan_command->add_option(
      "--peers-per-rail", cl.plan_peers_per_rail,
      "Peers each host probes per rail (default: fleet.peers_per_rail, else 3)");
  cl.plan_flags["seed"] = cl.plan_command->add_option("--seed", cl.plan_seed,
                                                      "Plan seed (default: fleet.seed, else 0)");
  cl.plan_command
      ->add_option("--kinds", cl.plan.kinds,
                   "Probe kinds, comma-separated (default: the configuration's probes[] without "
                   "peers, else ucx_rtt,ucx_throughput)")
      ->delimiter(',');
  cl.plan_command->add_option("--output", cl.plan.output, "text or json");
}

int Fail(const std::string& message) {
  std::cerr << "rail_exporter: " << message << "\n";
  return 2;
}

// The agent's flags a subcommand shares (probe, doctor).
template <typename SubcommandOptions>
void CopyAgentFlags(const CommandLine& cl, SubcommandOptions& options) {
  options.sysfs_root = cl.options.sysfs_root;
  options.config_file = cl.options.config_file;
  options.insecure = cl.options.peer_insecure;
  options.worker_path = cl.options.probe_worker_path;
}

bool ConfigureLogging(const CommandLine& cl) {
  try {
    rail::base::ConfigureLogging(cl.log_level, cl.log_format);
    return true;
  } catch (const std::exception& error) {
    Fail(error.what());
    return false;
  }
}

int RunProbe(CommandLine& cl) {
  const auto duration = cl.probe_duration.empty() ? std::optional(cl.probe.duration)
                                                  : rail::agent::ParseDuration(cl.probe_duration);
  const auto timeout = rail::agent::ParseDuration(cl.probe_timeout);
  if (!duration || !timeout || duration->count() <= 0) {
    std::cerr << "rail_exporter probe: --duration/--timeout: expected durations such as 2s\n";
    return 2;
  }
  cl.probe.duration = *duration;
  cl.probe.timeout = *timeout;
  CopyAgentFlags(cl, cl.probe);
  if (!ConfigureLogging(cl)) return 2;
  return rail::commands::RunProbeCommand(cl.probe, std::cout, std::cerr);
}

int RunDoctor(CommandLine& cl) {
  CopyAgentFlags(cl, cl.doctor);
  cl.doctor.procfs_root = cl.options.procfs_root;
  cl.doctor.ethtool_root = cl.options.ethtool_root;
  cl.doctor.lldpd_socket = cl.options.lldpd_socket;
  cl.doctor.cuda_library = cl.options.cuda_library;
  if (!ConfigureLogging(cl)) return 2;
  return rail::commands::RunDoctor(cl.doctor, std::cout, std::cerr);
}

int RunPlan(CommandLine& cl) {
  auto& plan = cl.plan;
  plan.sysfs_root = cl.options.sysfs_root;
  plan.config_file = cl.options.config_file;
  if (cl.plan_flags.at("self")->count() > 0) plan.self = cl.plan_self;
  if (cl.plan_flags.at("epoch")->count() > 0) plan.epoch = cl.plan_epoch;
  if (cl.plan_flags.at("peers-per-rail")->count() > 0) plan.peers_per_rail = cl.plan_peers_per_rail;
  if (cl.plan_flags.at("seed")->count() > 0) plan.seed = cl.plan_seed;
  if (!ConfigureLogging(cl)) return 2;
  return rail::commands::RunPlanCommand(plan, std::cout, std::cerr);
}

void TuneProcess() {
  rail::base::TuneMemoryAllocator();
  // Counter files stay open between scrapes (one pread each instead of open+read+close); a
  // large host has thousands of them, more than the usual soft limit of 1024 descriptors.
  if (rlimit files{}; getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

int RunAgent(CommandLine& cl) {
  if (const auto interval = rail::agent::ParseDuration(cl.gid_refresh)) {
    cl.options.gid_refresh_interval = *interval;
  } else {
    return Fail("--collector.gid.refresh-interval: expected a duration such as 30s, got '" +
                cl.gid_refresh + "' (see --help)");
  }
  cl.options.gid_entries = cl.gid_entries == "all" ? rail::collectors::GidEntryScope::kAll
                                                   : rail::collectors::GidEntryScope::kRoceV2Ipv4;
  TuneProcess();
  cl.options.collectors = EnabledCollectors(cl);
  cl.options.log_level = cl.log_level;
  cl.options.log_format = cl.log_format;
  const sigset_t signals =
      rail::commands::LifecycleSignals();  // blocked since main's first instruction
  try {
    rail::base::ConfigureLogging(cl.log_level, cl.log_format);
    rail::commands::Lifecycle lifecycle(signals);
    cl.options.stop_requested = lifecycle.stop_requested();
    rail::agent::Agent agent(cl.options);
    while (lifecycle.Wait() == rail::commands::Lifecycle::Event::kReload) agent.Reload("SIGHUP");
    agent.Stop();
    spdlog::info("stopped");
  } catch (const std::exception& error) {
    std::cerr << "rail_exporter: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Blocked from the first instruction, so that a stop that comes while the agent starts is
  // answered, never the default death by signal. The subcommands give them their default actions
  // back.
  const sigset_t lifecycle = rail::commands::LifecycleSignals();
  pthread_sigmask(SIG_BLOCK, &lifecycle, nullptr);
  CLI::App app{"rail_exporter: Prometheus exporter and probe agent for RDMA rails"};
  app.option_defaults()->always_capture_default();
  CommandLine cl;
  AddAgentFlags(app, cl);
  AddProbeCommand(app, cl);
  AddDoctorCommand(app, cl);
  AddPlanCommand(app, cl);
  AddCollectorFlags(app, cl);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and friends print their text; a real error is one line, like every other failure.
    if (error.get_exit_code() == 0) return app.exit(error);
    std::cerr << "rail_exporter: " << error.what() << " (see --help)\n";
    return error.get_exit_code();
  }
  if (cl.show_version) {
    const auto& build = rail::base::GetBuildInfo();
    std::cout << "rail_exporter " << build.version << " (revision " << build.revision << ", "
              << build.compiler << ", UCX "
              << rail::probe::QueryWorkerUcxVersion(
                     rail::probe::FindWorkerExecutable(cl.options.probe_worker_path))
              << ")\n";
    return 0;
  }
  if (!cl.config_file.empty()) cl.options.config_file = cl.config_file;
  if (*cl.doctor_command || *cl.plan_command || *cl.probe_command) {
    pthread_sigmask(SIG_UNBLOCK, &lifecycle, nullptr);
  }
  if (*cl.doctor_command) return RunDoctor(cl);
  if (*cl.plan_command) return RunPlan(cl);
  return *cl.probe_command ? RunProbe(cl) : RunAgent(cl);
}
