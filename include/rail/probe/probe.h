// A probe kind: params in, result out (like UCX perftest's library entry point). One class per
// kind under src/probe/. A probe never throws: every failure becomes a result with a reason.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "rail/base/clock.h"
#include "rail/probe/counters.h"
#include "rail/probe/result.h"

namespace rail::peer {
class PeerClient;
}

namespace rail::probe {

// Opens an authenticated control connection to a peer agent ("host:port"); on failure returns
// nullptr and sets a stable reason token (refused, timeout, auth, version, limit, ...) and a
// message for people.
using PeerConnector = std::function<std::unique_ptr<peer::PeerClient>(
    const std::string& peer, std::chrono::milliseconds timeout, std::string* reason,
    std::string* message)>;

struct ProbeContext {
  PeerConnector connect;
  // Reads the counters of the local rails before and after the transfer; may be null (then no
  // counter cross-check is reported).
  const RailCounterReader* counters = nullptr;
  // Every rail of this host, so that bytes showing up on a rail the probe did not use are seen.
  std::vector<ProbeRail> all_rails;
  const std::atomic<bool>* cancel = nullptr;  // set on shutdown
  // Whether a run that finds the probe worker restarting waits for it (within
  // WorkerPolicy::max_restart_wait) rather than being skipped at once.
  bool wait_for_worker = true;
};

class Probe {
 public:
  virtual ~Probe() = default;
  virtual ProbeKind kind() const = 0;
  virtual ProbeResult Run(const ProbeParams& params, const ProbeContext& context) = 0;
};

// Every kind but the TCP ones needs UCX, and so runs in the probe worker process (worker.h).
bool NeedsUcx(ProbeKind kind);
// The TCP kinds, run in the calling process; nullptr for a kind that needs UCX.
std::unique_ptr<Probe> MakeTcpProbe(ProbeKind kind);
// Makes the probe of a kind: MakeTcpProbe plus the worker's remote probes in the agent
// (WorkerProbeMaker), every kind in process in the worker and the tests (MakeProbe, in_process.h).
using ProbeMaker = std::function<std::unique_ptr<Probe>(ProbeKind kind)>;

// Read before and after a probe operation, on each side, to report the CPU the probe cost.
using base::ThreadCpuSeconds;

}  // namespace rail::probe
