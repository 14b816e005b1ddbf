// Helpers to run a CollectorSet on a filesystem and look samples up in what it produced.
#pragma once

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rail/collectors/collector_set.h"

namespace rail::test {

using LabelMap = std::map<std::string, std::string>;

inline std::vector<std::string> AllCollectorNames() {
  std::vector<std::string> names;
  for (const auto& info : collectors::KnownCollectors()) names.push_back(info.name);
  return names;
}

// Value of the sample of `family` whose labels include all of `labels`; nullopt when absent.
inline std::optional<double> Sample(const std::vector<prometheus::MetricFamily>& families,
                                    const std::string& family, const LabelMap& labels = {}) {
  for (const auto& candidate : families) {
    if (candidate.name != family) continue;
    for (const auto& metric : candidate.metric) {
      std::size_t matched = 0;
      for (const auto& label : metric.label) {
        const auto wanted = labels.find(label.name);
        if (wanted != labels.end() && wanted->second == label.value) ++matched;
      }
      if (matched != labels.size()) continue;
      return candidate.type == prometheus::MetricType::Counter ? metric.counter.value
                                                               : metric.gauge.value;
    }
  }
  return std::nullopt;
}

inline std::size_t SampleCount(const std::vector<prometheus::MetricFamily>& families,
                               const std::string& family) {
  for (const auto& candidate : families) {
    if (candidate.name == family) return candidate.metric.size();
  }
  return 0;
}

inline std::string Serialize(const std::vector<prometheus::MetricFamily>& families) {
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace rail::test
