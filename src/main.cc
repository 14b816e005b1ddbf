// Command line of rail_exporter. Flags follow node_exporter's conventions. Everything but flag
// parsing and signal handling lives in the library (rail/agent.h).
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <csignal>
#include <iostream>
#include <map>

#include "rail/agent.h"
#include "rail/build_info.h"
#include "rail/collector.h"
#include "rail/logging.h"

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

  std::map<std::string, bool> enabled;
  for (const auto& info : rail::KnownCollectors()) {
    enabled[info.name] = info.enabled_by_default;
    app.add_flag("--collector." + info.name + ",!--no-collector." + info.name,
                 enabled[info.name],
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
