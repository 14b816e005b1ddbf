// The health section of the configuration: the checks' thresholds (health::Thresholds), each key
// checked for its type and range.
#include <yaml-cpp/yaml.h>

#include "agent/config_yaml.h"

namespace rail::agent::detail {
namespace {

// A fraction in (0, 1].
double Fraction(const YAML::Node& node, const std::string& source, const std::string& key) {
  const auto value = Scalar<double>(node, source, key, "a number between 0 and 1");
  if (!(value > 0 && value <= 1)) {
    Fail(source, key, "must be greater than 0 and at most 1, got " + node.Scalar());
  }
  return value;
}

// The per-second limits of the fabric checks: 0 or more.
void ParseFabricRates(const YAML::Node& node, const std::string& source, health::Thresholds& out) {
  const std::pair<const char*, double*> rates[] = {
      {"pause_max_frames_per_second", &out.pause_max_frames_per_second},
      {"port_discards_max_per_second", &out.port_discards_max_per_second},
      {"host_receive_drops_max_per_second", &out.host_receive_drops_max_per_second},
      {"roce_retransmissions_max_per_second", &out.roce_retransmissions_max_per_second},
  };
  for (const auto& [key, value] : rates) {
    if (!node[key]) continue;
    const std::string name = std::string("health.") + key;
    *value = Scalar<double>(node[key], source, name, "a number of events per second");
    if (!(*value >= 0)) Fail(source, name, "must be 0 or more, got " + node[key].Scalar());
  }
}

// The thresholds of the checks judged on the NIC's counters and temperatures.
void ParseFabricHealth(const YAML::Node& node, const std::string& source, health::Thresholds& out) {
  if (node["fabric_window"]) {
    out.fabric_window = DurationValue(node["fabric_window"], source, "health.fabric_window");
  }
  if (const auto interval = node["fabric_sample_interval"]) {
    // 0 turns the agent's own sampling off: the counters are then read by the scrapes alone.
    const bool off = interval.IsScalar() && (interval.Scalar() == "0" || interval.Scalar() == "0s");
    out.fabric_sample_interval =
        off ? base::Duration::zero()
            : DurationValue(interval, source, "health.fabric_sample_interval");
  }
  if (node["pfc_pause_max_fraction"]) {
    out.pfc_pause_max_fraction =
        Fraction(node["pfc_pause_max_fraction"], source, "health.pfc_pause_max_fraction");
  }
  if (node["global_pause_max_fraction"]) {
    out.global_pause_max_fraction =
        Fraction(node["global_pause_max_fraction"], source, "health.global_pause_max_fraction");
  }
  ParseFabricRates(node, source, out);
  if (node["link_max_corrected_bit_ratio"]) {
    out.link_max_corrected_bit_ratio = Fraction(node["link_max_corrected_bit_ratio"], source,
                                                "health.link_max_corrected_bit_ratio");
  }
  if (node["nic_temperature_margin_celsius"]) {
    out.nic_temperature_margin_celsius = Positive<double>(
        node["nic_temperature_margin_celsius"], source, "health.nic_temperature_margin_celsius");
  }
}

// The thresholds judged on the probe series' history.
void ParseProbeHealth(const YAML::Node& node, const std::string& source, health::Thresholds& out) {
  if (node["probe_failing_runs"]) {
    out.probe_failing_runs =
        Positive<unsigned>(node["probe_failing_runs"], source, "health.probe_failing_runs");
  }
}

// health.cabling: `layout` (rail-optimized, or any: no layout beyond the switches' patterns),
// `switches` (rail name: a glob of its leaf's system name) and `change_window` (a duration).
void ParseCabling(const YAML::Node& node, const std::string& source, health::Cabling& out) {
  if (!node.IsMap()) Fail(source, "health.cabling", "expected a mapping");
  RejectUnknownKeys(node, {"layout", "switches", "change_window"}, source, "health.cabling.");
  if (node["change_window"]) {
    out.change_window =
        DurationValue(node["change_window"], source, "health.cabling.change_window");
  }
  if (node["layout"]) {
    const auto layout = Scalar<std::string>(node["layout"], source, "health.cabling.layout",
                                            "rail-optimized or any");
    if (layout != "rail-optimized" && layout != "any") {
      Fail(source, "health.cabling.layout", "expected rail-optimized or any, not '" + layout + "'");
    }
    out.rail_optimized = layout == "rail-optimized";
  }
  if (const auto switches = node["switches"]) {
    if (!switches.IsMap()) Fail(source, "health.cabling.switches", "expected rail: pattern pairs");
    for (const auto& entry : switches) {
      const auto rail = entry.first.as<std::string>();
      out.switches[rail] =
          Scalar<std::string>(entry.second, source, "health.cabling.switches." + rail, "a pattern");
    }
  }
}

}  // namespace

void ParseHealth(const YAML::Node& node, const std::string& source, health::Thresholds& out) {
  if (!node.IsMap()) Fail(source, "health", "expected a mapping");
  RejectUnknownKeys(
      node,
      {"probe_throughput_min_line_rate_fraction", "probe_throughput_min_sibling_fraction",
       "multirail_max_rail_share", "multirail_min_efficiency", "gpu_nic_max_path",
       "gpu_memory_min_host_ratio", "fabric_window", "fabric_sample_interval",
       "pfc_pause_max_fraction", "global_pause_max_fraction", "pause_max_frames_per_second",
       "port_discards_max_per_second", "host_receive_drops_max_per_second",
       "roce_retransmissions_max_per_second", "link_max_corrected_bit_ratio",
       "nic_temperature_margin_celsius", "roce_priority", "probe_failing_runs", "cabling"},
      source, "health.");
  ParseFabricHealth(node, source, out);
  ParseProbeHealth(node, source, out);
  if (node["cabling"]) ParseCabling(node["cabling"], source, out.cabling);
  if (node["probe_throughput_min_line_rate_fraction"]) {
    out.probe_throughput_min_line_rate_fraction =
        Fraction(node["probe_throughput_min_line_rate_fraction"], source,
                 "health.probe_throughput_min_line_rate_fraction");
  }
  if (node["probe_throughput_min_sibling_fraction"]) {
    out.probe_throughput_min_sibling_fraction =
        Fraction(node["probe_throughput_min_sibling_fraction"], source,
                 "health.probe_throughput_min_sibling_fraction");
  }
  if (node["multirail_max_rail_share"]) {
    out.multirail_max_rail_share =
        Fraction(node["multirail_max_rail_share"], source, "health.multirail_max_rail_share");
    // With a share of 1 no rail could ever carry more: the check would be off without saying so.
    if (out.multirail_max_rail_share >= 1) {
      Fail(source, "health.multirail_max_rail_share", "must be below 1");
    }
  }
  if (node["multirail_min_efficiency"]) {
    out.multirail_min_efficiency =
        Fraction(node["multirail_min_efficiency"], source, "health.multirail_min_efficiency");
  }
  if (node["gpu_nic_max_path"]) {
    const auto name = Scalar<std::string>(node["gpu_nic_max_path"], source,
                                          "health.gpu_nic_max_path", "PIX, PXB, PHB, NODE or SYS");
    const auto path = inventory::ParsePciPath(name);
    if (!path) {
      Fail(source, "health.gpu_nic_max_path",
           "expected PIX, PXB, PHB, NODE or SYS, got '" + name + "'");
    }
    out.gpu_nic_max_path = *path;
  }
  if (node["gpu_memory_min_host_ratio"]) {
    out.gpu_memory_min_host_ratio =
        Fraction(node["gpu_memory_min_host_ratio"], source, "health.gpu_memory_min_host_ratio");
  }
  if (node["roce_priority"]) {
    out.roce_priority = Scalar<unsigned>(node["roce_priority"], source, "health.roce_priority",
                                         "a priority from 0 to 7");
    if (out.roce_priority > 7) Fail(source, "health.roce_priority", "must be 0 to 7");
  }
}

}  // namespace rail::agent::detail
