// peer_hello: a hello-only record (doctor --peer's handshake: a result over no rail) passes when
// the peer answered its hello and fails with why it did not. The agent's probes always run over
// rails: their failed handshakes are probe_failing's.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"

namespace rail::health::detail {

void CheckPeerHellos(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto& state : Series(inputs)) {
    if (!state.key.rail.empty()) continue;
    const auto& hello = state.last;
    const bool answered = !hello.peer_agent_version.empty();
    out.push_back(Verdict("peer_hello", "", hello.peer,
                          answered ? std::string()
                                   : fmt::format("no hello from {}: {} ({})", hello.peer,
                                                 hello.error_reason, hello.error_message)));
  }
}

}  // namespace rail::health::detail
