// The responder's side of the probe kinds: which handler serves a probe_setup.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rail/peer/responder.h"
#include "rail/probe/result.h"

namespace rail::probe {

// The responder half of a kind over local rails; nullptr when that kind is not served so.
using HandlerMaker = std::function<std::unique_ptr<peer::ProbeSessionHandler>(
    ProbeKind kind, const std::vector<ProbeRail>& rails)>;

// Whether a responder half of `kind` takes `rails` rails: one, or several for
// ucx_multirail_throughput (one context over them all).
bool HandlerServes(ProbeKind kind, std::size_t rails);

// The TCP kinds' halves (one rail each), in the calling process; nullptr for other kinds or
// for more than one rail.
std::unique_ptr<peer::ProbeSessionHandler> MakeTcpHandler(ProbeKind kind,
                                                          const std::vector<ProbeRail>& rails);

// Maps the rail names of probe_setup onto `local_rails` (by ProbeRail::name) and the kind onto
// MakeTcpHandler or, for the kinds that need UCX, `ucx_handlers` (the worker's in the agent,
// in-process ones in the worker and the tests); an unknown rail or kind gives nullptr (the
// responder answers "unknown_kind"). A comma-separated list ("rail0,rail1") names several local
// rails, each once; only ucx_multirail_throughput accepts more than one.
peer::ProbeHandlerFactory MakeProbeHandlerFactory(std::vector<ProbeRail> local_rails,
                                                  HandlerMaker ucx_handlers);

}  // namespace rail::probe
