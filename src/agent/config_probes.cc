// The probes[] section of the agent's configuration, and the durations its timing is given in.
#include <charconv>
#include <string>
#include <vector>

#include "agent/config_yaml.h"
#include "rail/agent/config.h"
#include "rail/gpu/memory.h"
#include "rail/probe/result.h"

namespace rail::agent {
namespace detail {

std::chrono::milliseconds DurationValue(const YAML::Node& node, const std::string& source,
                                        const std::string& key) {
  const auto text = Scalar<std::string>(node, source, key, "a duration such as 2s or 5m");
  const auto duration = ParseDuration(text);
  if (!duration || duration->count() <= 0) {
    Fail(source, key,
         "expected a positive duration such as 500ms, 2s, 5m or 1h, got '" + text + "'");
  }
  return *duration;
}

namespace {

std::string ProbeKind(const YAML::Node& probe, const std::string& source, const std::string& key) {
  if (!probe["kind"]) Fail(source, key + ".kind", "missing");
  auto kind = Scalar<std::string>(probe["kind"], source, key + ".kind", "a probe kind");
  if (!probe::ParseProbeKind(kind)) {
    Fail(source, key + ".kind",
         "unknown probe kind '" + kind +
             "' (ucx_throughput, ucx_rtt, multirail_capacity, ucx_multirail_throughput, "
             "tcp_throughput, tcp_rtt)");
  }
  return kind;
}

std::string UcxOperation(const YAML::Node& node, const std::string& source,
                         const std::string& key) {
  auto operation = Scalar<std::string>(node, source, key, "put, get or am");
  if (!probe::ParseUcxOperation(operation)) {
    Fail(source, key, "expected put, get or am, got '" + operation + "'");
  }
  return operation;
}

std::vector<std::uint64_t> MessageSizes(const YAML::Node& node, const std::string& source,
                                        const std::string& key) {
  if (!node.IsSequence() || node.size() == 0) {
    Fail(source, key, "expected a non-empty list of byte counts");
  }
  std::vector<std::uint64_t> sizes;
  for (std::size_t i = 0; i < node.size(); ++i) {
    sizes.push_back(Positive<std::uint64_t>(node[i], source, key + "[" + std::to_string(i) + "]"));
  }
  return sizes;
}

unsigned Streams(const YAML::Node& node, const std::string& source, const std::string& key) {
  const auto streams = Positive<unsigned>(node, source, key);
  if (streams > 64) Fail(source, key, "at most 64");
  return streams;
}

// Buffers of another memory type than host exist only for the kinds that move bulk data through
// UCX registered memory; the RTT and TCP kinds would silently ignore the field.
gpu::MemoryType Memory(const YAML::Node& node, const std::string& kind, const std::string& source,
                       const std::string& key) {
  const auto text = Scalar<std::string>(node, source, key, "host, cuda or cuda_host");
  const auto memory = gpu::ParseMemoryType(text);
  if (!memory) Fail(source, key, "expected host, cuda or cuda_host, got '" + text + "'");
  const auto parsed_kind = probe::ParseProbeKind(kind);
  if (*memory != gpu::MemoryType::kHost && !probe::TakesMemoryType(*parsed_kind)) {
    Fail(source, key,
         "memory '" + text +
             "' needs kind ucx_throughput, multirail_capacity or "
             "ucx_multirail_throughput (" +
             kind + " moves host memory only)");
  }
  return *memory;
}

void ParseTiming(const YAML::Node& node, const std::string& source, const std::string& key,
                 ProbeConfig& probe) {
  if (node["duration"]) probe.duration = DurationValue(node["duration"], source, key + ".duration");
  if (node["interval"]) probe.interval = DurationValue(node["interval"], source, key + ".interval");
  if (node["timeout"]) probe.timeout = DurationValue(node["timeout"], source, key + ".timeout");
  if (node["jitter"]) {
    probe.jitter = Scalar<double>(node["jitter"], source, key + ".jitter", "a fraction");
    if (probe.jitter < 0 || probe.jitter >= 1) Fail(source, key + ".jitter", "must be in [0, 1)");
  }
}

// A run must be able to finish before its timeout, and be given up before the next one is due.
void DefaultTimeoutAndCheckTiming(ProbeConfig& probe, const std::string& source,
                                  const std::string& key) {
  if (probe.timeout.count() == 0) probe.timeout = probing::DefaultTimeout(probe.duration);
  if (probe.timeout <= probe.duration) {
    Fail(source, key + ".timeout", "must be longer than the duration");
  }
  if (probe.interval <= probe.timeout) {
    Fail(source, key + ".interval", "must be longer than the timeout");
  }
}

ProbeConfig ParseProbe(const YAML::Node& node, const std::string& source, const std::string& key) {
  if (!node.IsMap()) Fail(source, key, "expected a mapping");
  RejectUnknownKeys(
      node,
      {"kind", "peers", "rails", "operation", "message_sizes", "window", "streams", "duration",
       "interval", "jitter", "timeout", "ucx_transports", "max_bytes", "memory"},
      source, key + ".");
  ProbeConfig probe;
  probe.kind = ProbeKind(node, source, key);
  if (node["peers"]) probe.peers = StringList(node["peers"], source, key + ".peers");
  if (node["rails"]) probe.rails = StringList(node["rails"], source, key + ".rails");
  if (node["operation"]) {
    probe.operation = UcxOperation(node["operation"], source, key + ".operation");
  }
  if (const auto sizes = node["message_sizes"]) {
    probe.message_sizes_bytes = MessageSizes(sizes, source, key + ".message_sizes");
  }
  if (node["window"]) probe.window = Positive<unsigned>(node["window"], source, key + ".window");
  if (node["streams"]) probe.streams = Streams(node["streams"], source, key + ".streams");
  ParseTiming(node, source, key, probe);
  if (node["ucx_transports"]) {
    probe.transports = Scalar<std::string>(node["ucx_transports"], source, key + ".ucx_transports",
                                           "a UCX_TLS value");
  }
  if (node["max_bytes"]) {
    probe.max_bytes = Positive<std::uint64_t>(node["max_bytes"], source, key + ".max_bytes");
  }
  if (node["memory"]) probe.memory = Memory(node["memory"], probe.kind, source, key + ".memory");
  DefaultTimeoutAndCheckTiming(probe, source, key);
  return probe;
}

}  // namespace

std::vector<ProbeConfig> ParseProbes(const YAML::Node& node, const std::string& source) {
  if (!node.IsSequence()) Fail(source, "probes", "expected a list");
  std::vector<ProbeConfig> probes;
  for (std::size_t i = 0; i < node.size(); ++i) {
    probes.push_back(ParseProbe(node[i], source, "probes[" + std::to_string(i) + "]"));
  }
  return probes;
}

}  // namespace detail

std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  double number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  double milliseconds_per_unit = 0;
  if (unit == "ms") {
    milliseconds_per_unit = 1;
  } else if (unit == "s" || unit.empty()) {
    milliseconds_per_unit = 1e3;
  } else if (unit == "m") {
    milliseconds_per_unit = 60e3;
  } else if (unit == "h") {
    milliseconds_per_unit = 3600e3;
  } else {
    return std::nullopt;
  }
  // from_chars also reads "inf", "nan" and 1e300, which no integer holds; converting those is
  // undefined. The bound also keeps "now + interval" and "duration + 10 s" in range.
  const double milliseconds = number * milliseconds_per_unit;
  const auto max = std::chrono::duration_cast<std::chrono::milliseconds>(kMaxDuration).count();
  if (!(milliseconds >= 0 && milliseconds <= static_cast<double>(max))) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(milliseconds));
}

}  // namespace rail::agent
