#include "rail/probing/config.h"

#include <algorithm>

#include "rail/probe/probe.h"

namespace rail::probing {

bool Responds(const ProbingConfig& config) {
  return !config.responder.listen_address.empty();
}

bool HasUcxProbes(const ProbingConfig& config) {
  return std::any_of(config.probes.begin(), config.probes.end(), [](const ProbeConfig& entry) {
    const auto kind = probe::ParseProbeKind(entry.kind);
    return kind && probe::NeedsUcx(*kind);
  });
}

bool Probes(const ProbingConfig& config) {
  return Responds(config) || !config.probes.empty() || config.fleet.has_value();
}

}  // namespace rail::probing
