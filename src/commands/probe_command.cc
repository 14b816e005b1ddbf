#include "rail/commands/probe_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>
#include <thread>

#include "rail/agent/config.h"
#include "rail/base/build_info.h"
#include "rail/commands/command_setup.h"
#include "rail/commands/refused_retry.h"
#include "rail/peer/client.h"
#include "rail/probe/counters.h"
#include "rail/probe/result_store.h"
#include "rail/probing/plan.h"
#include "rail/probing/wiring.h"
#include "rail/sysfs/filesystem.h"

namespace rail::commands {
namespace {

std::string Micros(const std::optional<probe::LatencySummary>& rtt,
                   double probe::LatencySummary::*field) {
  return rtt ? fmt::format("{:.1f}", (*rtt).*field * 1e6) : "-";
}

std::string Lanes(const probe::ProbeResult& result) {
  std::string text;
  for (const auto& lane : result.lanes) {
    text += (text.empty() ? "" : ",") + lane.transport + "/" + lane.device;
  }
  return text.empty() ? "-" : text;
}

// The run's spread and the invariants its figures broke.
void AddFigureQuality(const probe::ProbeResult& result, nlohmann::json& json) {
  if (result.spread) {
    json["spread"] = {{"intervals", result.spread->intervals},
                      {"min_bytes_per_second", result.spread->min_bytes_per_second},
                      {"max_bytes_per_second", result.spread->max_bytes_per_second},
                      {"mean_bytes_per_second", result.spread->mean_bytes_per_second},
                      {"cv", result.spread->cv}};
  }
  for (const auto& problem : result.withheld) {
    json["withheld"].push_back({{"invariant", problem.invariant}, {"message", problem.message}});
  }
}

nlohmann::json ToJson(const probe::ProbeResult& result) {
  nlohmann::json json = {
      {"kind", probe::ProbeKindName(result.kind)},
      {"peer", result.peer},
      {"rails", result.rails},
      {"success", result.success},
      {"message_size_bytes", result.message_size_bytes},
      {"seconds", result.seconds},
      {"bytes", result.bytes},
      {"throughput_bytes_per_second", result.throughput_bytes_per_second},
      {"bytes_on_other_rails", result.bytes_on_other_rails},
      {"local_cpu_seconds", result.local_cpu_seconds},
      {"peer_agent_version", result.peer_agent_version},
      {"peer_ucx_version", result.peer_ucx_version},
      {"peer_name", result.peer_name},
      {"fallback_rails", result.fallback_rails},
  };
  if (!result.success) {
    json["error_reason"] = result.error_reason;
    json["error_message"] = result.error_message;
  }
  if (probe::IsBusy(result)) json["retry_after_ms"] = result.retry_after.count();
  if (probe::TakesMemoryType(result.kind)) {
    json["memory"] = gpu::MemoryTypeName(result.memory);
    json["memory_path"] = result.memory_path;
  }
  if (!result.gpu_pci_bus_id.empty()) json["gpu_pci_bus_id"] = result.gpu_pci_bus_id;
  if (result.gpu_link_speed_gts) json["gpu_link_speed_gts"] = *result.gpu_link_speed_gts;
  // A successful run's message is a note (the GPU chosen without the topology's answer).
  if (result.success && !result.error_message.empty()) json["note"] = result.error_message;
  if (result.peer_cpu_seconds) json["peer_cpu_seconds"] = *result.peer_cpu_seconds;
  if (result.rtt) {
    json["rtt_round_trip_seconds"] = {{"count", result.rtt->count}, {"min", result.rtt->min},
                                      {"p50", result.rtt->p50},     {"p90", result.rtt->p90},
                                      {"p99", result.rtt->p99},     {"p999", result.rtt->p999},
                                      {"max", result.rtt->max}};
  }
  for (const auto& rail : result.per_rail) {
    json["per_rail"].push_back(
        {{"rail", rail.rail}, {"bytes", rail.bytes}, {"bytes_per_second", rail.bytes_per_second}});
  }
  for (const auto& lane : result.lanes) {
    json["lanes"].push_back(
        {{"transport", lane.transport}, {"device", lane.device}, {"rail", lane.rail}});
  }
  for (const auto& delta : result.counters) {
    json["counters"].push_back({{"rail", delta.rail},
                                {"transmit_bytes", delta.transmit_bytes},
                                {"receive_bytes", delta.receive_bytes},
                                {"share", delta.share}});
  }
  AddFigureQuality(result, json);
  return json;
}

// "ok", the failure, or why the figures cannot be trusted.
std::string Status(const probe::ProbeResult& result) {
  if (!result.success) return result.error_reason + ": " + result.error_message;
  if (result.withheld.empty()) return "ok";
  std::string text = "figures withheld";
  for (const auto& problem : result.withheld) {
    text += " (" + problem.invariant + ": " + problem.message + ")";
  }
  return text;
}

}  // namespace

std::string FormatProbeTable(const std::vector<probe::ProbeResult>& results) {
  std::string table =
      fmt::format("{:<25} {:<16} {:<14} {:>9} {:>14} {:>8} {:>9} {:>10} {:>10} {:<24} {}\n", "kind",
                  "peer", "rail", "size", "bytes", "seconds", "Gbit/s", "rtt p50us", "rtt p99us",
                  "transport", "status");
  auto row = [&table](const probe::ProbeResult& result, const std::string& rail,
                      std::uint64_t bytes, double bytes_per_second, bool summary_row) {
    table +=
        fmt::format("{:<25} {:<16} {:<14} {:>9} {:>14} {:>8.3f} {:>9.3f} {:>10} {:>10} {:<24} {}\n",
                    probe::ProbeKindName(result.kind), result.peer, rail, result.message_size_bytes,
                    bytes, result.seconds, bytes_per_second * 8 / 1e9,
                    summary_row ? Micros(result.rtt, &probe::LatencySummary::p50) : "-",
                    summary_row ? Micros(result.rtt, &probe::LatencySummary::p99) : "-",
                    summary_row ? Lanes(result) : "-", Status(result));
  };
  for (const auto& result : results) {
    row(result, probe::RailLabel(result.rails), result.bytes, result.throughput_bytes_per_second,
        true);
    for (const auto& rail : result.per_rail) {
      row(result, "  " + rail.rail, rail.bytes, rail.bytes_per_second, false);
    }
    for (const auto& delta : result.counters) {
      table += fmt::format(
          "{:<25} {:<16} {:<14} counters: transmitted {} bytes, {:.1f}% of the "
          "probed rails' bytes\n",
          "", "", "  " + delta.rail, delta.transmit_bytes, delta.share * 100);
    }
    if (result.spread) {
      table += fmt::format(
          "{:<25} {:<16} {:<14} spread: {} intervals, {:.3f} to {:.3f} Gbit/s, "
          "cv {:.3f}\n",
          "", "", "", result.spread->intervals, result.spread->min_bytes_per_second * 8 / 1e9,
          result.spread->max_bytes_per_second * 8 / 1e9, result.spread->cv);
    }
  }
  return table;
}

std::string FormatProbeJson(const std::vector<probe::ProbeResult>& results) {
  nlohmann::json json = nlohmann::json::array();
  for (const auto& result : results) json.push_back(ToJson(result));
  return json.dump(2) + "\n";
}

namespace {

// The rails named by --rail (all when none is named); empty, with the error written, when one of
// them is not this host's.
std::vector<probe::ProbeRail> SelectRails(const std::vector<probe::ProbeRail>& all_rails,
                                          const std::vector<std::string>& names,
                                          const CommandSetup& setup) {
  std::vector<probe::ProbeRail> selected;
  for (const auto& rail : all_rails) {
    if (names.empty() || std::find(names.begin(), names.end(), rail.name) != names.end()) {
      selected.push_back(rail);
    }
  }
  if (selected.size() != (names.empty() ? all_rails.size() : names.size()) || selected.empty()) {
    std::string has;
    for (const auto& rail : all_rails) has += " " + rail.name;
    setup.Error("--rail: this host has no such rail (it has:" + has + ")");
    return {};
  }
  return selected;
}

// What --kind and --operation name, once both are understood.
struct ProbeChoice {
  probe::ProbeKind kind;
  probe::UcxOperation operation;
  gpu::MemoryType memory;
};

// The choice the options make; nullopt, with the error written, when an option is not understood.
std::optional<ProbeChoice> CheckOptions(const ProbeCommandOptions& options,
                                        const CommandSetup& setup) {
  const auto kind = probe::ParseProbeKind(options.kind);
  if (!kind) {
    setup.Error("--kind: unknown probe kind '" + options.kind + "'");
    return std::nullopt;
  }
  const auto operation = probe::ParseUcxOperation(options.operation);
  if (!operation) {
    setup.Error("--operation: expected put, get or am");
    return std::nullopt;
  }
  if (!setup.OutputIsOneOf(options.output, {"table", "json"})) return std::nullopt;
  const auto memory = gpu::ParseMemoryType(options.memory);
  if (!memory) {
    setup.Error("--memory: expected host, cuda or cuda_host");
    return std::nullopt;
  }
  if (*memory != gpu::MemoryType::kHost && !probe::TakesMemoryType(*kind)) {
    setup.Error("--memory " + options.memory +
                " needs --kind ucx_throughput, multirail_capacity or ucx_multirail_throughput");
    return std::nullopt;
  }
  return ProbeChoice{*kind, *operation, *memory};
}

// Everything but the rails, which each run sets.
probe::ProbeParams ParamsFor(const ProbeCommandOptions& options, const ProbeChoice& choice) {
  probe::ProbeParams params;
  params.kind = choice.kind;
  params.peer = options.peer;
  params.operation = choice.operation;
  params.message_sizes_bytes = options.message_sizes_bytes.empty()
                                   ? probing::DefaultMessageSizes(choice.kind)
                                   : options.message_sizes_bytes;
  params.window = options.window;
  params.streams = options.streams;
  params.duration = options.duration;
  params.timeout =
      options.timeout.count() > 0 ? options.timeout : probing::DefaultTimeout(options.duration);
  params.ucx_transports = options.ucx_transports;
  params.memory = choice.memory;
  return params;
}

// Runs the probe the options describe; the exit status.
int ProbeAndReport(const ProbeCommandOptions& options, const ProbeChoice& choice,
                   const CommandSetup& setup, std::ostream& out, std::ostream& err) {
  const agent::AgentConfig config = CommandSetup::LoadConfig(options.config_file);
  sysfs::RootedFilesystem sys(options.sysfs_root);
  const auto all_rails = probing::LocalProbeRails(sys, config.probing);
  const auto selected = SelectRails(all_rails, options.rails, setup);
  if (selected.empty()) return kExitCouldNotRun;
  const auto secret_file = CommandSetup::SecretFile(options.secret_file, config);
  if (!secret_file && !options.insecure) {
    setup.Error("needs --peer.secret-file (or --peer.insecure)");
    return kExitCouldNotRun;
  }
  base::SteadyClock clock;
  probing::WorkerSettings worker{options.worker_path, options.sysfs_root, "warn", "logfmt"};
  worker.environment = probing::UcxQuirkWorkaround(sys, config.probing, {}, options.worker_path);
  probing::ProbeWiring wiring(sys, all_rails, probing::LoadSecret(secret_file, "secret file"),
                              clock, 1024, std::move(worker));
  if (probe::NeedsUcx(choice.kind)) wiring.StartWorker();
  const probe::ProbeContext context = wiring.Context();

  probe::ProbeParams params = ParamsFor(options, choice);
  auto probe = wiring.Probes()(choice.kind);
  if (!probe) {
    setup.Error("this build cannot run " + options.kind);
    return kExitCouldNotRun;
  }
  RefusedRetry retry;
  retry.sleep = [](base::Duration wait) { std::this_thread::sleep_for(wait); };
  std::vector<probe::ProbeResult> results;
  for (const auto& rails : probing::RunsOver(choice.kind, selected)) {
    params.rails = rails;
    for (auto& result : RunRetryingRefusals(*probe, params, context, retry, err)) {
      result.peer = options.peer;
      // The same invariants as the agent's: a figure that cannot be true is no success here
      // either.
      result.withheld = probe::CheckRunFigures(result, params, config.probing.figures);
      results.push_back(std::move(result));
    }
  }
  out << (options.output == "json" ? FormatProbeJson(results) : FormatProbeTable(results));
  const bool all_good = std::all_of(results.begin(), results.end(), [](const auto& result) {
    return result.success && result.withheld.empty();
  });
  return all_good ? kExitOk : kExitFailed;
}

}  // namespace

int RunProbeCommand(const ProbeCommandOptions& options, std::ostream& out, std::ostream& err) {
  const CommandSetup setup("probe", err);
  const auto choice = CheckOptions(options, setup);
  if (!choice) return kExitCouldNotRun;
  return setup.Run([&] { return ProbeAndReport(options, *choice, setup, out, err); });
}

}  // namespace rail::commands
