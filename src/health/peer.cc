// peer_version: the peer's agent and UCX versions (from its latest probe handshake) should match
// ours; UCX wire compatibility across versions is not guaranteed and mixed agents mislead.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"

namespace rail::health {

std::string VersionDifferences(const std::string& peer_agent_version,
                               const std::string& peer_ucx_version,
                               const std::string& own_agent_version,
                               const std::string& own_ucx_version) {
  std::vector<std::string> differences;
  if (peer_agent_version != own_agent_version) {
    differences.push_back(fmt::format("agent {} (ours {})", peer_agent_version, own_agent_version));
  }
  if (peer_ucx_version != own_ucx_version) {
    differences.push_back(fmt::format("UCX {} (ours {})", peer_ucx_version, own_ucx_version));
  }
  return detail::Join(differences);
}

namespace detail {

void CheckPeerVersions(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto* result : LatestPerPeer(inputs)) {
    const std::string differences =
        VersionDifferences(result->peer_agent_version, result->peer_ucx_version,
                           inputs.own_agent_version, inputs.own_ucx_version);
    out.push_back(Verdict("peer_version", "", result->peer,
                          differences.empty() ? std::string() : "the peer runs " + differences));
  }
}

}  // namespace detail
}  // namespace rail::health
