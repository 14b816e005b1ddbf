#include "probe/worker/wire.h"

#include <chrono>

namespace rail::nic {
namespace {

// The enums cross as their values: the worker and the agent are one build.
template <typename Enum>
Enum EnumFromJson(const nlohmann::json& value, Enum last) {
  const auto number = value.get<unsigned>();
  if (number > static_cast<unsigned>(last)) {
    throw std::invalid_argument("enum value out of range: " + value.dump());
  }
  return static_cast<Enum>(number);
}

}  // namespace

void to_json(nlohmann::json& out, const FabricSample& sample) {
  out = {{"counter", static_cast<unsigned>(sample.counter)},
         {"direction", static_cast<unsigned>(sample.direction)},
         {"operation", static_cast<unsigned>(sample.operation)},
         {"value", sample.value},
         {"source", sample.source}};
  if (sample.priority) out["priority"] = *sample.priority;
  if (sample.index) out["index"] = *sample.index;
}

void from_json(const nlohmann::json& in, FabricSample& sample) {
  sample.counter = EnumFromJson(in.at("counter"), FabricCounter::kLastFabricCounter);
  sample.direction = EnumFromJson(in.at("direction"), Direction::kTx);
  sample.operation = EnumFromJson(in.at("operation"), PciOperation::kWrite);
  in.at("value").get_to(sample.value);
  in.at("source").get_to(sample.source);
  if (in.contains("priority")) sample.priority = in.at("priority").get<unsigned>();
  if (in.contains("index")) sample.index = in.at("index").get<unsigned>();
}

// A run's evidence is counters: the pause settings (qos_config's) do not cross.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FabricReading, netdev, driver, statistics, samples,
                                                known_driver, no_statistics, repeated_names,
                                                unparsable, first_unparsable)

}  // namespace rail::nic

namespace rail::probe {

// Field-for-field encodings, found by nlohmann's lookup in the structs' own namespace. Missing
// fields keep their defaults, so that a result without samples stays small on the wire.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProbeRail, name, ucx_device, netdev, ipv4,
                                                rdma_device, rdma_port, expect_rdma)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RailCounterDelta, rail, transmit_bytes,
                                                receive_bytes, share)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RailFabricEvidence, rail, seconds, nic, counters)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RailThroughput, rail, bytes_per_second, bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TransportLane, transport, device, rail)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RateSpread, intervals, min_bytes_per_second,
                                                max_bytes_per_second, mean_bytes_per_second, cv)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LatencySummary, count, min, p50, p90, p99, p999,
                                                max)

namespace worker {
namespace {

using nlohmann::json;

ProbeKind KindFromJson(const json& value) {
  const auto kind = ParseProbeKind(value.get<std::string>());
  if (!kind) throw std::invalid_argument("unknown probe kind " + value.dump());
  return *kind;
}

UcxOperation OperationFromJson(const json& value) {
  const auto operation = ParseUcxOperation(value.get<std::string>());
  if (!operation) throw std::invalid_argument("unknown UCX operation " + value.dump());
  return *operation;
}

gpu::MemoryType MemoryFromJson(const json& value) {
  const auto memory = gpu::ParseMemoryType(value.get<std::string>());
  if (!memory) throw std::invalid_argument("unknown memory type " + value.dump());
  return *memory;
}

json TimeToJson(std::chrono::system_clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

std::chrono::system_clock::time_point TimeFromJson(const json& value) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(value.get<std::int64_t>())));
}

// Runs `parse`; a json exception or a refused value becomes nullopt + `error`.
template <typename Parse>
auto Guarded(Parse parse, std::string* error) -> std::optional<decltype(parse())> {
  try {
    return parse();
  } catch (const std::exception& failure) {
    *error = failure.what();
    return std::nullopt;
  }
}

void ReadResultSummary(const json& in, ProbeResult& out) {
  out.kind = KindFromJson(in.at("kind"));
  in.at("peer").get_to(out.peer);
  in.at("rails").get_to(out.rails);
  in.at("success").get_to(out.success);
  in.at("error_reason").get_to(out.error_reason);
  in.at("error_message").get_to(out.error_message);
  out.retry_after = std::chrono::milliseconds(in.at("retry_after_ms").get<std::int64_t>());
  out.finished_at = TimeFromJson(in.at("finished_at"));
  in.at("seconds").get_to(out.seconds);
  in.at("bytes").get_to(out.bytes);
  in.at("bytes_sent").get_to(out.bytes_sent);
  in.at("throughput_bytes_per_second").get_to(out.throughput_bytes_per_second);
  in.at("message_size_bytes").get_to(out.message_size_bytes);
  in.at("streams").get_to(out.streams);
}

void ReadResultDetails(const json& in, ProbeResult& out) {
  in.at("per_rail").get_to(out.per_rail);
  in.at("rtt_samples_seconds").get_to(out.rtt_samples_seconds);
  if (in.contains("rtt")) out.rtt = in.at("rtt").get<LatencySummary>();
  if (in.contains("spread")) out.spread = in.at("spread").get<RateSpread>();
  in.at("lanes").get_to(out.lanes);
  in.at("fallback_rails").get_to(out.fallback_rails);
  in.at("counters").get_to(out.counters);
  in.at("bytes_on_other_rails").get_to(out.bytes_on_other_rails);
  in.at("fabric").get_to(out.fabric);
  in.at("local_cpu_seconds").get_to(out.local_cpu_seconds);
  if (in.contains("peer_cpu_seconds"))
    out.peer_cpu_seconds = in.at("peer_cpu_seconds").get<double>();
  in.at("peer_agent_version").get_to(out.peer_agent_version);
  in.at("peer_ucx_version").get_to(out.peer_ucx_version);
  in.at("peer_name").get_to(out.peer_name);
  in.at("peer_rail_mtus").get_to(out.peer_rail_mtus);
  out.memory = MemoryFromJson(in.at("memory"));
  in.at("memory_path").get_to(out.memory_path);
  in.at("gpu_pci_bus_id").get_to(out.gpu_pci_bus_id);
  if (in.contains("gpu_link_speed_gts")) {
    out.gpu_link_speed_gts = in.at("gpu_link_speed_gts").get<double>();
  }
}

}  // namespace

json ToJson(const ProbeRail& rail) {
  return rail;
}

json ToJson(const std::vector<ProbeRail>& rails) {
  return rails;
}

json ToJson(const ProbeParams& params) {
  return {{"kind", ProbeKindName(params.kind)},
          {"peer", params.peer},
          {"rails", params.rails},
          {"operation", UcxOperationName(params.operation)},
          {"message_sizes_bytes", params.message_sizes_bytes},
          {"window", params.window},
          {"streams", params.streams},
          {"duration_ms", params.duration.count()},
          {"timeout_ms", params.timeout.count()},
          {"ucx_transports", params.ucx_transports},
          {"memory", gpu::MemoryTypeName(params.memory)}};
}

json ToJson(const ProbeResult& result) {
  json out = {{"kind", ProbeKindName(result.kind)},
              {"peer", result.peer},
              {"rails", result.rails},
              {"success", result.success},
              {"error_reason", result.error_reason},
              {"error_message", result.error_message},
              {"retry_after_ms", result.retry_after.count()},
              {"finished_at", TimeToJson(result.finished_at)},
              {"seconds", result.seconds},
              {"bytes", result.bytes},
              {"bytes_sent", result.bytes_sent},
              {"throughput_bytes_per_second", result.throughput_bytes_per_second},
              {"message_size_bytes", result.message_size_bytes},
              {"streams", result.streams},
              {"per_rail", result.per_rail},
              {"rtt_samples_seconds", result.rtt_samples_seconds},
              {"lanes", result.lanes},
              {"fallback_rails", result.fallback_rails},
              {"counters", result.counters},
              {"bytes_on_other_rails", result.bytes_on_other_rails},
              {"fabric", result.fabric},
              {"local_cpu_seconds", result.local_cpu_seconds},
              {"peer_agent_version", result.peer_agent_version},
              {"peer_ucx_version", result.peer_ucx_version},
              {"peer_name", result.peer_name},
              {"peer_rail_mtus", result.peer_rail_mtus},
              {"memory", gpu::MemoryTypeName(result.memory)},
              {"memory_path", result.memory_path},
              {"gpu_pci_bus_id", result.gpu_pci_bus_id}};
  if (result.rtt) out["rtt"] = *result.rtt;
  if (result.spread) out["spread"] = *result.spread;
  if (result.gpu_link_speed_gts) out["gpu_link_speed_gts"] = *result.gpu_link_speed_gts;
  if (result.peer_cpu_seconds) out["peer_cpu_seconds"] = *result.peer_cpu_seconds;
  return out;
}

std::optional<std::vector<ProbeRail>> RailsFromJson(const json& in, std::string* error) {
  return Guarded([&] { return in.get<std::vector<ProbeRail>>(); }, error);
}

std::optional<ProbeParams> ParamsFromJson(const json& in, std::string* error) {
  return Guarded(
      [&] {
        ProbeParams out;
        out.kind = KindFromJson(in.at("kind"));
        in.at("peer").get_to(out.peer);
        in.at("rails").get_to(out.rails);
        out.operation = OperationFromJson(in.at("operation"));
        in.at("message_sizes_bytes").get_to(out.message_sizes_bytes);
        in.at("window").get_to(out.window);
        in.at("streams").get_to(out.streams);
        out.duration = std::chrono::milliseconds(in.at("duration_ms").get<std::int64_t>());
        out.timeout = std::chrono::milliseconds(in.at("timeout_ms").get<std::int64_t>());
        in.at("ucx_transports").get_to(out.ucx_transports);
        out.memory = MemoryFromJson(in.at("memory"));
        return out;
      },
      error);
}

std::optional<ProbeResult> ResultFromJson(const json& in, std::string* error) {
  return Guarded(
      [&] {
        ProbeResult out;
        ReadResultSummary(in, out);
        ReadResultDetails(in, out);
        return out;
      },
      error);
}

}  // namespace worker
}  // namespace rail::probe
