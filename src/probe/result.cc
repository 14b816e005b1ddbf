#include "rail/probe/result.h"

#include <algorithm>

namespace rail::probe {
namespace {

struct KindName {
  ProbeKind kind;
  const char* name;
};

constexpr KindName kKindNames[] = {
    {ProbeKind::kUcxThroughput, "ucx_throughput"},
    {ProbeKind::kUcxRtt, "ucx_rtt"},
    {ProbeKind::kMultirailCapacity, "multirail_capacity"},
    {ProbeKind::kUcxMultirailThroughput, "ucx_multirail_throughput"},
    {ProbeKind::kTcpThroughput, "tcp_throughput"},
    {ProbeKind::kTcpRtt, "tcp_rtt"},
};

}  // namespace

const char* ProbeKindName(ProbeKind kind) {
  for (const auto& entry : kKindNames) {
    if (entry.kind == kind) return entry.name;
  }
  return "unknown";
}

std::optional<ProbeKind> ParseProbeKind(const std::string& name) {
  for (const auto& entry : kKindNames) {
    if (name == entry.name) return entry.kind;
  }
  return std::nullopt;
}

std::vector<std::string> RailNames(const std::vector<ProbeRail>& rails) {
  std::vector<std::string> names;
  names.reserve(rails.size());
  for (const ProbeRail& rail : rails) names.push_back(rail.name);
  return names;
}

bool IsBulk(ProbeKind kind) {
  return kind != ProbeKind::kUcxRtt && kind != ProbeKind::kTcpRtt;
}

bool IsBusy(const ProbeResult& result) {
  return !result.success && result.error_reason == kBusyReason;
}

bool CountsAsFailedRun(const ProbeResult& result) {
  return !result.success && !IsBusy(result) && result.error_reason != "cancelled" &&
         result.error_reason != "worker_unavailable";
}

bool IsMultiRail(ProbeKind kind) {
  return kind == ProbeKind::kMultirailCapacity || kind == ProbeKind::kUcxMultirailThroughput;
}

bool TakesMemoryType(ProbeKind kind) {
  return kind == ProbeKind::kUcxThroughput || kind == ProbeKind::kMultirailCapacity ||
         kind == ProbeKind::kUcxMultirailThroughput;
}

const char* UcxOperationName(UcxOperation operation) {
  switch (operation) {
    case UcxOperation::kPut:
      return "put";
    case UcxOperation::kGet:
      return "get";
    case UcxOperation::kAm:
      return "am";
  }
  return "unknown";
}

std::optional<UcxOperation> ParseUcxOperation(const std::string& name) {
  if (name == "put") return UcxOperation::kPut;
  if (name == "get") return UcxOperation::kGet;
  if (name == "am") return UcxOperation::kAm;
  return std::nullopt;
}

std::optional<RailCounterDelta> BusiestProbedRail(const ProbeResult& result) {
  if (result.kind != ProbeKind::kUcxMultirailThroughput) return std::nullopt;
  std::size_t counted = 0;
  const RailCounterDelta* busiest = nullptr;
  for (const auto& delta : result.counters) {
    // Deltas of rails the run did not use only say that other traffic ran meanwhile.
    if (std::find(result.rails.begin(), result.rails.end(), delta.rail) == result.rails.end()) {
      continue;
    }
    ++counted;
    if (busiest == nullptr || delta.share > busiest->share) busiest = &delta;
  }
  if (counted < 2) return std::nullopt;
  return *busiest;
}

}  // namespace rail::probe
