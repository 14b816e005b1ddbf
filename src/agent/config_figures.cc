// The figures section of the configuration: what a probe run's figures must obey to be published
// (probe::FigureLimits), each key checked for its type and range.
#include <yaml-cpp/yaml.h>

#include "agent/config_yaml.h"

namespace rail::agent::detail {

void ParseFigures(const YAML::Node& node, const std::string& source, probe::FigureLimits& out) {
  if (!node.IsMap()) Fail(source, "figures", "expected a mapping");
  RejectUnknownKeys(node,
                    {"striping_efficiency_tolerance", "counter_tolerance", "line_rate_tolerance",
                     "ratio_max_age", "max_interval_cv"},
                    source, "figures.");
  // Fractions of a figure that its noise may take: 0 (exact) up to 1.
  const std::pair<const char*, double*> tolerances[] = {
      {"striping_efficiency_tolerance", &out.striping_efficiency_tolerance},
      {"counter_tolerance", &out.counter_tolerance},
      {"line_rate_tolerance", &out.line_rate_tolerance},
  };
  for (const auto& [key, value] : tolerances) {
    if (!node[key]) continue;
    const std::string name = std::string("figures.") + key;
    *value = Scalar<double>(node[key], source, name, "a number between 0 and 1");
    if (!(*value >= 0 && *value <= 1)) {
      Fail(source, name, "must be between 0 and 1, got " + node[key].Scalar());
    }
  }
  if (node["ratio_max_age"]) {
    out.ratio_max_age = DurationValue(node["ratio_max_age"], source, "figures.ratio_max_age");
  }
  if (node["max_interval_cv"]) {
    out.max_interval_cv =
        Positive<double>(node["max_interval_cv"], source, "figures.max_interval_cv");
  }
}

}  // namespace rail::agent::detail
