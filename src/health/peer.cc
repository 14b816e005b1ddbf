// peer_version: the peer's agent and UCX versions (from its latest probe handshake) should match
// ours; UCX wire compatibility across versions is not guaranteed and mixed agents mislead.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"

namespace rail::health::detail {

void CheckPeerVersions(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto* result : LatestPerPeer(inputs)) {
    std::vector<std::string> differences;
    if (result->peer_agent_version != inputs.own_agent_version) {
      differences.push_back(
          fmt::format("agent {} (ours {})", result->peer_agent_version, inputs.own_agent_version));
    }
    if (result->peer_ucx_version != inputs.own_ucx_version) {
      differences.push_back(
          fmt::format("UCX {} (ours {})", result->peer_ucx_version, inputs.own_ucx_version));
    }
    out.push_back(
        Verdict("peer_version", "", result->peer,
                differences.empty() ? std::string() : "the peer runs " + Join(differences)));
  }
}

}  // namespace rail::health::detail
