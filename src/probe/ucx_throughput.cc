// ucx_throughput: one rail, one rail-restricted context, put/get/am with a window of outstanding
// operations. The same run over one context spanning several rails is ucx_multirail_throughput.
#include <algorithm>
#include <exception>

#include "ucx_probe_run.h"

namespace rail::probe {

namespace detail {

using nlohmann::json;

void RunOneContextThroughput(const ProbeParams& params, const ProbeContext& context,
                             ProbeResult* result) {
  const double cpu_start = ThreadCpuSeconds();
  const ProbeDeadline deadline(params.timeout, context.cancel);
  const DeadlineWatchdog watchdog(deadline);
  const CounterCheck counters(context, params);
  const std::uint64_t size = MessageSize(params, 1 << 20);
  result->message_size_bytes = size;

  UcxPeerLink link;
  UcxPeerLink::Request request;
  request.kind = params.kind;
  request.rails = params.rails;
  request.message_bytes = size;
  request.local_buffer_bytes = static_cast<std::size_t>(size);
  request.max_bytes = kUcxThroughputMaxBytes;
  ThroughputOutcome outcome;
  if (link.Open(request, params, context, deadline, result)) {
    // Lanes before the run: an aborted run closes the endpoint, and what it was set up to use
    // is still worth reporting. Read again afterwards in case wire-up changed them.
    link.CaptureLanes();
    BoundDrainTimeout(link.side(), deadline);
    outcome = link.side().RunThroughput(
        params.operation, static_cast<std::size_t>(size), params.window,
        std::min<std::chrono::nanoseconds>(params.duration, deadline.Remaining()), watchdog.flag());
    link.CaptureLanes();
    if (!outcome.ok()) {
      SetFailure(result, ProbeAbortReason(outcome.error_reason, deadline), outcome.error_message);
    } else if (outcome.bytes == 0) {
      SetFailure(result, "no_data", "no operation completed");
    }
  }
  const std::optional<json> report =
      link.Finish(json{{"operation", UcxOperationName(params.operation)},
                       {"bytes", outcome.bytes},
                       {"seconds", outcome.seconds},
                       {"operations", outcome.operations}},
                  deadline, result);
  counters.Finish(result);

  result->bytes = outcome.bytes;
  result->bytes_sent = outcome.bytes;
  result->seconds = outcome.seconds;
  result->throughput_bytes_per_second = outcome.bytes_per_second();
  result->lanes = link.lanes();
  AddFallbackRails(result->lanes, params.rails, result);
  if (params.rails.size() > 1) {
    // UCX does not say which rail carried what: the rails' own counters do. The payload is
    // attributed to the probed rails in proportion to their transmitted bytes.
    for (const RailCounterDelta& delta : result->counters) {
      const bool probed =
          std::any_of(params.rails.begin(), params.rails.end(),
                      [&](const ProbeRail& rail) { return rail.name == delta.rail; });
      if (!probed || delta.share <= 0) continue;
      result->per_rail.push_back(
          {delta.rail, result->throughput_bytes_per_second * delta.share,
           static_cast<std::uint64_t>(static_cast<double>(result->bytes) * delta.share)});
    }
  }
  if (report) result->peer_cpu_seconds = ReportNumber(*report, "cpu_seconds");
  result->local_cpu_seconds = ThreadCpuSeconds() - cpu_start;
  FinishResult(result);
}

}  // namespace detail

ProbeResult UcxThroughputProbe::Run(const ProbeParams& params, const ProbeContext& context) {
  ProbeResult result = detail::NewResult(params);
  result.kind = ProbeKind::kUcxThroughput;
  try {
    if (std::optional<std::string> invalid = detail::ValidateUcxParams(params, true, 1 << 20)) {
      detail::SetFailure(&result, "invalid_argument", *invalid);
      return result;
    }
    // One rail: the first, as the TCP kinds do.
    ProbeParams one = params;
    one.kind = ProbeKind::kUcxThroughput;
    one.rails.resize(1);
    result.rails = {one.rails.front().name};
    detail::RunOneContextThroughput(one, context, &result);
  } catch (const std::exception& error) {
    detail::SetFailure(&result, "internal", error.what());
  }
  return result;
}

}  // namespace rail::probe
