// Small helpers to build prometheus-cpp MetricFamily values without a Registry: collectors
// produce a fresh snapshot per scrape, so there is no state to keep in metric objects.
#pragma once

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace rail::collectors::detail {

using Labels = std::vector<prometheus::ClientMetric::Label>;

// `labels` and one more, allocated once at their final size.
inline Labels With(Labels labels, const Labels& more) {
  labels.insert(labels.end(), more.begin(), more.end());
  return labels;
}

inline Labels With(const Labels& labels, const char* name, std::string value) {
  Labels out;
  out.reserve(labels.size() + 1);
  out.insert(out.end(), labels.begin(), labels.end());
  out.push_back({name, std::move(value)});
  return out;
}

class FamilyBuilder {
 public:
  FamilyBuilder(std::string name, std::string help, prometheus::MetricType type) {
    family_.name = std::move(name);
    family_.help = std::move(help);
    family_.type = type;
  }

  FamilyBuilder& Add(Labels labels, double value) {
    prometheus::ClientMetric metric;
    metric.label = std::move(labels);
    if (family_.type == prometheus::MetricType::Counter) {
      metric.counter.value = value;
    } else {
      metric.gauge.value = value;
    }
    family_.metric.push_back(std::move(metric));
    return *this;
  }

  bool empty() const { return family_.metric.empty(); }

  // Moves the family into `out`, dropping families without samples.
  void MoveTo(std::vector<prometheus::MetricFamily>& out) {
    if (!family_.metric.empty()) out.push_back(std::move(family_));
    family_.metric.clear();
  }

 private:
  prometheus::MetricFamily family_;
};

inline FamilyBuilder Gauge(std::string name, std::string help) {
  return FamilyBuilder(std::move(name), std::move(help), prometheus::MetricType::Gauge);
}
inline FamilyBuilder Counter(std::string name, std::string help) {
  return FamilyBuilder(std::move(name), std::move(help), prometheus::MetricType::Counter);
}

}  // namespace rail::collectors::detail
