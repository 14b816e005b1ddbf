// multirail_capacity: every rail driven at the same time, one rail-restricted context and one
// control session per rail, as NCCL drives several NICs. What each rail achieves while the others
// run shows bottlenecks the rails share (PCIe, memory bandwidth, CPU); the aggregate is the
// yardstick for UCX's own striping (ucx_multirail_throughput).
#include <algorithm>
#include <exception>
#include <latch>

#include "ucx_probe_run.h"

namespace rail::probe {

namespace {

using nlohmann::json;

constexpr std::uint64_t kDefaultBytes = 1 << 20;

struct RailRun {
  ThroughputOutcome outcome;
  double cpu_seconds = 0;
};

// One rail's thread. A first, short run (one window and its drain) completes the wire-up, which
// over tcp includes connection set-up; only then do all rails meet at the barrier, so that their
// timed phases overlap as closely as the rails allow.
void DriveRail(UcxProbeSide& side, const ProbeParams& params, std::size_t size,
               const detail::ProbeDeadline& deadline, const std::atomic<bool>* cancel,
               std::latch& ready, std::atomic<bool>& any_failed, RailRun* run) {
  const double cpu_start = ThreadCpuSeconds();
  const ThroughputOutcome wireup = side.RunThroughput(params.operation, size, params.window,
                                                      std::chrono::nanoseconds(0), cancel);
  if (!wireup.ok()) {
    run->outcome.error_reason = wireup.error_reason;
    run->outcome.error_message = "wire-up: " + wireup.error_message;
    any_failed = true;
  }
  ready.arrive_and_wait();
  // A rail that could not start makes the run a failure: the others need not load the peer.
  if (!any_failed) {
    run->outcome = side.RunThroughput(
        params.operation, size, params.window,
        std::min<std::chrono::nanoseconds>(params.duration, deadline.Remaining()), cancel);
  }
  run->cpu_seconds = ThreadCpuSeconds() - cpu_start;
}

}  // namespace

ProbeResult MultirailCapacityProbe::Run(const ProbeParams& params, const ProbeContext& context) {
  ProbeResult result = detail::NewResult(params);
  result.kind = ProbeKind::kMultirailCapacity;
  try {
    if (std::optional<std::string> invalid =
            detail::ValidateUcxParams(params, true, kDefaultBytes)) {
      detail::SetFailure(&result, "invalid_argument", *invalid);
      return result;
    }
    const double cpu_start = ThreadCpuSeconds();
    const detail::ProbeDeadline deadline(params.timeout, context.cancel);
    const detail::DeadlineWatchdog watchdog(deadline);
    const detail::CounterCheck counters(context, params);
    const std::uint64_t size = detail::MessageSize(params, kDefaultBytes);
    result.message_size_bytes = size;

    // Every side is created and connected before any data moves.
    std::vector<std::unique_ptr<detail::UcxPeerLink>> links;
    bool opened = true;
    for (const ProbeRail& rail : params.rails) {
      detail::UcxPeerLink::Request request;
      request.kind = ProbeKind::kMultirailCapacity;
      request.rails = {rail};
      request.message_bytes = size;
      request.local_buffer_bytes = static_cast<std::size_t>(size);
      request.max_bytes = kUcxThroughputMaxBytes;
      links.push_back(std::make_unique<detail::UcxPeerLink>());
      if (!links.back()->Open(request, params, context, deadline, &result)) {
        result.error_message = rail.name + ": " + result.error_message;
        opened = false;
        break;
      }
      links.back()->CaptureLanes();
    }

    std::vector<RailRun> runs(params.rails.size());
    if (opened) {
      std::latch ready(static_cast<std::ptrdiff_t>(links.size()));
      std::atomic<bool> any_failed{false};
      detail::JoiningThreads threads;
      std::size_t started = 0;
      try {
        for (; started < links.size(); ++started) {
          detail::BoundDrainTimeout(links[started]->side(), deadline);
          // Each side moves to its own thread and stays there until JoinAll: a serialized worker
          // may change threads, but never be used by two at once.
          threads.Start([&, index = started] {
            DriveRail(links[index]->side(), params, static_cast<std::size_t>(size), deadline,
                      watchdog.flag(), ready, any_failed, &runs[index]);
          });
        }
      } catch (...) {
        // The rails that did start must not wait at the barrier for threads that never will.
        any_failed = true;
        ready.count_down(static_cast<std::ptrdiff_t>(links.size() - started));
        throw;
      }
      threads.JoinAll();
    }

    double longest = 0;
    for (std::size_t index = 0; index < links.size() && opened; ++index) {
      const RailRun& run = runs[index];
      const std::string& name = params.rails[index].name;
      links[index]->CaptureLanes();
      result.local_cpu_seconds += run.cpu_seconds;
      if (!run.outcome.ok()) {
        detail::SetFailure(&result, detail::ProbeAbortReason(run.outcome.error_reason, deadline),
                           name + ": " + run.outcome.error_message);
      } else if (run.outcome.bytes == 0) {
        detail::SetFailure(&result, "no_data", name + ": no operation completed");
      }
      result.per_rail.push_back({name, run.outcome.bytes_per_second(), run.outcome.bytes});
      result.bytes += run.outcome.bytes;
      longest = std::max(longest, run.outcome.seconds);
    }
    result.seconds = longest;
    result.bytes_sent = result.bytes;
    if (longest > 0) {
      result.throughput_bytes_per_second = static_cast<double>(result.bytes) / longest;
    }

    // Each endpoint closes while every responder still serves; then the sessions end in turn.
    double peer_cpu = 0;
    bool every_peer_reported = !links.empty();
    for (std::size_t index = 0; index < links.size(); ++index) {
      const RailRun& run = runs[index];
      const std::optional<json> report =
          links[index]->Finish(json{{"operation", UcxOperationName(params.operation)},
                                    {"bytes", run.outcome.bytes},
                                    {"seconds", run.outcome.seconds}},
                               deadline, &result);
      const std::optional<double> cpu =
          report ? detail::ReportNumber(*report, "cpu_seconds") : std::nullopt;
      if (cpu) {
        peer_cpu += *cpu;
      } else {
        every_peer_reported = false;
      }
      for (const TransportLane& lane : links[index]->lanes()) result.lanes.push_back(lane);
      detail::AddFallbackRails(links[index]->lanes(), links[index]->rails(), &result);
    }
    if (every_peer_reported) result.peer_cpu_seconds = peer_cpu;
    counters.Finish(&result);
    result.local_cpu_seconds += ThreadCpuSeconds() - cpu_start;
    detail::FinishResult(&result);
  } catch (const std::exception& error) {
    detail::SetFailure(&result, "internal", error.what());
  }
  return result;
}

}  // namespace rail::probe
