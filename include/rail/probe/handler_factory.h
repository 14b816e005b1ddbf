// The responder's side of the probe kinds: which handler serves a probe_setup.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "rail/peer/responder.h"
#include "rail/probe/result.h"

namespace rail::probe {

// The handler for `kind` on `rail` (this host's rail of that name), or nullptr when this agent
// does not serve that kind.
std::unique_ptr<peer::ProbeSessionHandler> MakeProbeHandler(const std::string& kind,
                                                            const ProbeRail& rail);
// The same over several rails: only ucx_multirail_throughput serves more than one (one UCP
// context over all of them); every other kind gives nullptr for more than one rail.
std::unique_ptr<peer::ProbeSessionHandler> MakeProbeHandler(const std::string& kind,
                                                            const std::vector<ProbeRail>& rails);

// Maps the rail names of probe_setup onto `local_rails` (by ProbeRail::name) and the kind onto
// MakeProbeHandler; an unknown rail or kind gives nullptr (the responder answers "unknown_kind").
// A comma-separated list ("rail0,rail1") names several local rails, each once; only
// ucx_multirail_throughput accepts more than one.
peer::ProbeHandlerFactory MakeProbeHandlerFactory(std::vector<ProbeRail> local_rails);

}  // namespace rail::probe
