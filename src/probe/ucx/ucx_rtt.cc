// ucx_rtt: tagged ping-pong over one rail-restricted context; every sample is a full round trip.
#include <algorithm>

#include "probe/ucx/initiator.h"

namespace rail::probe {

namespace {

using nlohmann::json;

constexpr std::uint64_t kDefaultRttBytes = 8;
// What the probe declares to the responder: every round trip of the largest run, capped like
// tcp_rtt's so that large messages do not exceed any responder's byte limit.
constexpr std::uint64_t kRttMaxBytes = std::uint64_t{1} << 30;

void MeasureRoundTrips(detail::InitiatorRun& run) {
  const ProbeParams& params = run.params();
  ProbeResult& result = run.result();
  const detail::DeadlineWatchdog watchdog(run.deadline());
  const std::uint64_t size = detail::MessageSize(params, kDefaultRttBytes);
  const std::size_t max_round_trips =
      static_cast<std::size_t>(std::min<std::uint64_t>(kUcxRttMaxRoundTrips, kRttMaxBytes / size));
  result.message_size_bytes = size;

  detail::UcxPeerLink link;
  detail::UcxPeerLink::Request request;
  request.rails = params.rails;
  request.message_bytes = size;
  // Twice the message: the echo lands in the upper half, never over the ping UCX may still
  // be reading.
  request.local_buffer_bytes = static_cast<std::size_t>(2 * size);
  request.max_bytes = std::max<std::uint64_t>(size, size * max_round_trips);
  RttOutcome outcome;
  if (link.Open(request, run)) {
    link.CaptureLanes();
    detail::BoundDrainTimeout(link.side(), run.deadline());
    outcome = link.side().RunRtt(
        static_cast<std::size_t>(size),
        std::min<std::chrono::nanoseconds>(params.duration, run.deadline().Remaining()),
        max_round_trips, watchdog.flag());
    link.CaptureLanes();
    if (!outcome.ok()) {
      detail::SetFailure(&result, detail::ProbeAbortReason(outcome.error_reason, run.deadline()),
                         outcome.error_message);
    }
  }
  const std::uint64_t round_trips = outcome.samples_seconds.size();
  const std::optional<json> report =
      link.Finish(json{{"round_trips", round_trips}, {"bytes_sent", round_trips * size}}, run);

  double seconds = 0;
  for (const double sample : outcome.samples_seconds) seconds += sample;
  result.seconds = seconds;
  result.bytes = round_trips * size;
  result.bytes_sent = result.bytes;
  result.rtt = SummariseInPlace(outcome.samples_seconds);
  result.rtt_samples_seconds = std::move(outcome.samples_seconds);
  result.lanes = link.lanes();
  detail::AddFallbackRails(result.lanes, params.rails, &result);
  result.peer_cpu_seconds = detail::PeerCpuSeconds(report);
  if (result.error_reason.empty() && !result.rtt) {
    detail::SetFailure(&result, "no_data", "no round trip completed");
  }
}

}  // namespace

ProbeResult UcxRttProbe::Run(const ProbeParams& params, const ProbeContext& context) {
  return detail::RunInitiator(
      {ProbeKind::kUcxRtt, detail::ValidateUcxParams(params, false, kDefaultRttBytes),
       /*first_rail_only=*/true},
      params, context, MeasureRoundTrips);
}

}  // namespace rail::probe
