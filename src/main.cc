// Command line of rail_exporter. Flags follow node_exporter's conventions. Everything but flag
// parsing and signal handling lives in the library (rail/agent.h).
#include <malloc.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <map>

#include "rail/agent.h"
#include "rail/build_info.h"
#include "rail/collector.h"
#include "rail/logging.h"
#include "rail/probe_command.h"

namespace {

// Waits for SIGINT or SIGTERM. The signals are blocked before any thread starts, so every
// thread inherits the mask and only this sigwait receives them.
int WaitForTermination(const sigset_t& signals) {
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  return signal_number;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rail_exporter: Prometheus exporter and probe agent for RDMA rails"};
  app.option_defaults()->always_capture_default();
  rail::AgentOptions options;
  std::string log_level = "info";
  std::string log_format = "logfmt";
  std::string config_file;
  bool show_version = false;

  app.add_option("--web.listen-address", options.web.listen_addresses,
                 "Address to listen on for metrics and the landing page ([host]:port); may be "
                 "repeated")
      ->default_val(":9840");
  app.add_option("--web.telemetry-path", options.web.telemetry_path,
                 "Path under which to expose metrics");
  app.add_option("--web.config.file", options.web.config_file,
                 "Web config file (exporter-toolkit format): TLS and basic authentication");
  app.add_option("--path.sysfs", options.sysfs_root, "sysfs mountpoint (or a fixture tree)");
  app.add_option("--path.procfs", options.procfs_root, "procfs mountpoint (or a fixture tree)");
  app.add_option("--config.file", config_file, "YAML configuration file (rails)");
  app.add_option("--collector.infiniband.device-include", options.device_include,
                 "Regex of RDMA devices to read (others are not read at all)");
  app.add_option("--collector.infiniband.device-exclude", options.device_exclude,
                 "Regex of RDMA devices not to read at all");
  app.add_option("--log.level", log_level, "Log level: debug, info, warn, error");
  app.add_option("--log.format", log_format, "Log format: logfmt or json");
  app.add_flag("--version", show_version, "Print the version and exit");
  std::string gid_refresh = "30s";
  app.add_option("--collector.gid.refresh-interval", gid_refresh,
                 "Re-read GID tables at most this often (e.g. 30s; 0s: every scrape)");
  app.add_flag("--peer.insecure", options.peer_insecure,
               "Accept and probe peers without a shared secret (lab use only)");

  rail::ProbeCommandOptions probe_options;
  std::string probe_duration = "2s";
  std::string probe_timeout = "0s";
  auto* probe_command = app.add_subcommand(
      "probe", "Run one probe against a peer agent now and print the result (rails as rows)");
  // --config.file, --path.sysfs and --peer.insecure may also follow `probe`.
  probe_command->fallthrough();
  probe_command->add_option("--peer", probe_options.peer, "Peer agent's responder, HOST[:PORT]")
      ->required();
  probe_command
      ->add_option("--kind", probe_options.kind,
                   "ucx_throughput, ucx_rtt, multirail_capacity, "
                   "ucx_multirail_throughput, tcp_throughput or tcp_rtt")
      ->required();
  probe_command->add_option("--rail", probe_options.rails,
                            "Rail to probe (repeatable; default: all)");
  probe_command->add_option("--output", probe_options.output, "table or json");
  probe_command->add_option("--operation", probe_options.operation, "UCX operation: put, get, am");
  probe_command->add_option("--size", probe_options.message_sizes_bytes,
                            "Message size in bytes (repeatable; default: the kind's)");
  probe_command->add_option("--window", probe_options.window, "Outstanding UCX operations");
  probe_command->add_option("--streams", probe_options.streams, "Parallel TCP streams");
  probe_command->add_option("--duration", probe_duration, "How long data moves, e.g. 2s");
  probe_command->add_option("--timeout", probe_timeout, "Hard end of the probe (0s: duration+10s)");
  probe_command->add_option("--ucx-transports", probe_options.ucx_transports,
                            "UCX_TLS for the probe (default: UCX's choice)");
  probe_command->add_option("--peer.secret-file", probe_options.secret_file,
                            "Shared secret (default: the configuration's responder.secret_file)");

  std::map<std::string, bool> enabled;
  for (const auto& info : rail::KnownCollectors()) {
    enabled[info.name] = info.enabled_by_default;
    app.add_flag("--collector." + info.name + ",!--no-collector." + info.name, enabled[info.name],
                 "Enable the " + info.name + " collector: " + info.help);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and friends print their text; a real error is one line, like every other failure.
    if (error.get_exit_code() == 0) return app.exit(error);
    std::cerr << "rail_exporter: " << error.what() << " (see --help)\n";
    return error.get_exit_code();
  }
  if (show_version) {
    const auto& build = rail::GetBuildInfo();
    std::cout << "rail_exporter " << build.version << " (revision " << build.revision << ", "
              << build.compiler << ", UCX " << build.ucx_version << ")\n";
    return 0;
  }
  if (!config_file.empty()) options.config_file = config_file;
  if (*probe_command) {
    const auto duration = rail::ParseDuration(probe_duration);
    const auto timeout = rail::ParseDuration(probe_timeout);
    if (!duration || !timeout || duration->count() <= 0) {
      std::cerr << "rail_exporter probe: --duration/--timeout: expected durations such as 2s\n";
      return 2;
    }
    probe_options.duration = *duration;
    probe_options.timeout = *timeout;
    probe_options.sysfs_root = options.sysfs_root;
    probe_options.config_file = options.config_file;
    probe_options.insecure = options.peer_insecure;
    try {
      rail::ConfigureLogging(log_level, log_format);
    } catch (const std::exception& error) {
      std::cerr << "rail_exporter: " << error.what() << "\n";
      return 2;
    }
    return rail::RunProbeCommand(probe_options, std::cout, std::cerr);
  }
  if (const auto interval = rail::ParseDuration(gid_refresh)) {
    options.gid_refresh_interval = *interval;
  } else {
    std::cerr << "rail_exporter: --collector.gid.refresh-interval: expected a duration such as "
                 "30s, got '"
              << gid_refresh << "' (see --help)\n";
    return 2;
  }
  // One malloc arena: a scrape's transient memory (the families, the exposition) then reuses what
  // startup and earlier scrapes freed instead of growing an arena per civetweb worker. On the
  // large bench tree this is a peak RSS of 18 MiB instead of 23 MiB; the threads that allocate
  // (scrapes, probe set-up) are few and rarely at once, and each keeps glibc's per-thread cache.
  mallopt(M_ARENA_MAX, 1);
  // A fixed threshold: glibc otherwise raises it (up to 32 MiB) each time a large block is freed,
  // after which a probe's megabyte buffers come from the arenas and, fragmented, stay resident;
  // above the threshold they are mapped and returned to the kernel when the probe ends.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  // Counter files stay open between scrapes (one pread each instead of open+read+close); a
  // large host has thousands of them, more than the usual soft limit of 1024 descriptors.
  if (rlimit files{}; getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  for (const auto& [name, on] : enabled) {
    if (on) options.collectors.push_back(name);
  }

  sigset_t termination;
  sigemptyset(&termination);
  sigaddset(&termination, SIGINT);
  sigaddset(&termination, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &termination, nullptr);

  try {
    rail::ConfigureLogging(log_level, log_format);
    rail::Agent agent(options);
    const int signal_number = WaitForTermination(termination);
    spdlog::info("received signal {}, shutting down", signal_number);
  } catch (const std::exception& error) {
    std::cerr << "rail_exporter: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
