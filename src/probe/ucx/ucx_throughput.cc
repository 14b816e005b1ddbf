// ucx_throughput: one rail, one rail-restricted context, put/get/am with a window of outstanding
// operations. The same run over one context spanning several rails is ucx_multirail_throughput.
#include <algorithm>

#include "probe/ucx/initiator.h"

namespace rail::probe {

namespace detail {

namespace {

using nlohmann::json;

// UCX does not say which rail carried what: the rails' own counters do. The payload is
// attributed to the probed rails in proportion to their transmitted bytes.
void AttributeByCounters(const std::vector<ProbeRail>& rails, ProbeResult* result) {
  std::uint64_t attributed = 0;
  for (const RailCounterDelta& delta : result->counters) {
    const bool probed = std::any_of(rails.begin(), rails.end(),
                                    [&](const ProbeRail& rail) { return rail.name == delta.rail; });
    if (!probed || delta.share <= 0) continue;
    const auto bytes = std::min<std::uint64_t>(
        result->bytes - attributed,
        static_cast<std::uint64_t>(static_cast<double>(result->bytes) * delta.share));
    attributed += bytes;
    result->per_rail.push_back(
        {delta.rail, result->throughput_bytes_per_second * delta.share, bytes});
  }
  // The shares sum to 1: what rounding left over is the last rail's, so that the rails' bytes
  // are the run's (the rail_bytes_sum invariant).
  if (!result->per_rail.empty()) result->per_rail.back().bytes += result->bytes - attributed;
}

}  // namespace

void MeasureOneContextThroughput(InitiatorRun& run) {
  const ProbeParams& params = run.params();
  ProbeResult* result = &run.result();
  const DeadlineWatchdog watchdog(run.deadline());
  const std::uint64_t size = MessageSize(params, 1 << 20);
  result->message_size_bytes = size;

  UcxPeerLink link;
  ThroughputOutcome outcome;
  if (link.Open({params.rails, size, static_cast<std::size_t>(size), kUcxThroughputMaxBytes},
                run)) {
    // Lanes before the run: an aborted run closes the endpoint, and what it was set up to use
    // is still worth reporting. Read again afterwards in case wire-up changed them.
    link.CaptureLanes();
    BoundDrainTimeout(link.side(), run.deadline());
    const std::chrono::nanoseconds duration =
        std::min<std::chrono::nanoseconds>(params.duration, run.deadline().Remaining());
    MidTransferLinkSpeed link_speed(link.gpu() ? link.gpu()->pci_bus_id : "", duration);
    outcome = link.side().RunThroughput(params.operation, static_cast<std::size_t>(size),
                                        params.window, duration, watchdog.flag());
    result->gpu_link_speed_gts = link_speed.Take();
    link.CaptureLanes();
    if (!outcome.ok()) {
      SetFailure(result, ProbeAbortReason(outcome.error_reason, run.deadline()),
                 outcome.error_message);
    } else if (outcome.bytes == 0) {
      SetFailure(result, "no_data", "no operation completed");
    } else {
      result->error_message = outcome.note;  // a run that succeeded: what limited it by time
    }
  }
  const std::optional<json> report =
      link.Finish(json{{"operation", UcxOperationName(params.operation)},
                       {"bytes", outcome.bytes},
                       {"seconds", outcome.seconds},
                       {"operations", outcome.operations}},
                  run);
  run.CheckCounters();
  // A staging peer's copies are part of the transfer: the bytes are in device memory only then.
  outcome.seconds += link.PeerStagingSeconds(report, params.operation, outcome.bytes);
  result->bytes = outcome.bytes;
  result->bytes_sent = outcome.bytes;
  result->seconds = outcome.seconds;
  result->throughput_bytes_per_second = outcome.bytes_per_second();
  result->spread = SpreadOf(outcome.intervals.Rates());
  RecordMemory(link, result);
  result->lanes = link.lanes();
  AddFallbackRails(result->lanes, params.rails, result);
  if (params.rails.size() > 1) AttributeByCounters(params.rails, result);
  result->peer_cpu_seconds = PeerCpuSeconds(report);
}

}  // namespace detail

ProbeResult UcxThroughputProbe::Run(const ProbeParams& params, const ProbeContext& context) {
  // One rail: the first, as the TCP kinds do.
  return detail::RunInitiator(
      {ProbeKind::kUcxThroughput, detail::ValidateUcxParams(params, true, 1 << 20),
       /*first_rail_only=*/true},
      params, context, detail::MeasureOneContextThroughput);
}

}  // namespace rail::probe
