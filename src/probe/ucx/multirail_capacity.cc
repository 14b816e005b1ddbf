// multirail_capacity: every rail driven at the same time, one rail-restricted context and one
// control session per rail, as NCCL drives several NICs. What each rail achieves while the others
// run shows bottlenecks the rails share (PCIe, memory bandwidth, CPU); the aggregate is the
// yardstick for UCX's own striping (ucx_multirail_throughput).
#include <algorithm>
#include <latch>

#include "probe/ucx/initiator.h"

namespace rail::probe {

namespace {

using nlohmann::json;
using Links = std::vector<std::unique_ptr<detail::UcxPeerLink>>;

constexpr std::uint64_t kDefaultBytes = 1 << 20;

struct RailRun {
  ThroughputOutcome outcome;
  double cpu_seconds = 0;
};

// One rail's thread. A first warm-up (one window, bounded by time) completes the wire-up, which
// over tcp includes connection set-up; only then do all rails meet at the barrier, so that their
// timed phases overlap as closely as the rails allow.
void DriveRail(UcxProbeSide& side, const ProbeParams& params, std::size_t size,
               const detail::ProbeDeadline& deadline, const std::atomic<bool>* cancel,
               std::latch& ready, std::atomic<bool>& any_failed, RailRun* run) {
  const double cpu_start = ThreadCpuSeconds();
  const ThroughputOutcome wireup =
      side.WarmUpOnly(params.operation, size, params.window, params.duration, cancel);
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

// Creates and connects every rail's side before any data moves; false (the result says which
// rail failed) as soon as one cannot.
bool OpenLinks(detail::InitiatorRun& run, std::uint64_t size, Links* links) {
  for (const ProbeRail& rail : run.params().rails) {
    links->push_back(std::make_unique<detail::UcxPeerLink>());
    if (!links->back()->Open({{rail}, size, static_cast<std::size_t>(size), kUcxThroughputMaxBytes},
                             run)) {
      run.result().error_message = rail.name + ": " + run.result().error_message;
      return false;
    }
    links->back()->CaptureLanes();
  }
  return true;
}

// Runs every rail on its own thread at once, runs[i] for links[i]; returns when all have ended.
void DriveRails(detail::InitiatorRun& run, std::uint64_t size, Links& links,
                const std::atomic<bool>* cancel, std::vector<RailRun>* runs) {
  std::latch ready(static_cast<std::ptrdiff_t>(links.size()));
  std::atomic<bool> any_failed{false};
  detail::JoiningThreads threads;
  std::size_t started = 0;
  try {
    for (; started < links.size(); ++started) {
      detail::BoundDrainTimeout(links[started]->side(), run.deadline());
      // Each side moves to its own thread and stays there until JoinAll: a serialized worker
      // may change threads, but never be used by two at once.
      threads.Start([&, index = started] {
        DriveRail(links[index]->side(), run.params(), static_cast<std::size_t>(size),
                  run.deadline(), cancel, ready, any_failed, &(*runs)[index]);
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

// Each rail's throughput and the aggregate: the rails' bytes over the longest rail's time.
void AddRailRuns(detail::InitiatorRun& run, Links& links, const std::vector<RailRun>& runs) {
  ProbeResult& result = run.result();
  double longest = 0;
  // The rails started together at the barrier: cut into as many intervals as the slowest allows,
  // their intervals about line up.
  std::size_t intervals = kMaxSpreadIntervals;
  for (const RailRun& rail_run : runs) {
    intervals = std::min(intervals, rail_run.outcome.intervals.Intervals());
  }
  std::vector<std::vector<double>> interval_rates;
  for (std::size_t index = 0; index < links.size(); ++index) {
    const ThroughputOutcome& outcome = runs[index].outcome;
    interval_rates.push_back(outcome.intervals.Rates(intervals));
    const std::string& name = run.params().rails[index].name;
    links[index]->CaptureLanes();
    result.local_cpu_seconds += runs[index].cpu_seconds;
    if (!outcome.ok()) {
      detail::SetFailure(&result, detail::ProbeAbortReason(outcome.error_reason, run.deadline()),
                         name + ": " + outcome.error_message);
    } else if (outcome.bytes == 0) {
      detail::SetFailure(&result, "no_data", name + ": no operation completed");
    } else if (!outcome.note.empty() && result.error_reason.empty()) {
      // A run that succeeded: what limited the rail by time.
      result.error_message +=
          (result.error_message.empty() ? "" : "; ") + name + ": " + outcome.note;
    }
    result.per_rail.push_back({name, outcome.bytes_per_second(), outcome.bytes});
    result.bytes += outcome.bytes;
    longest = std::max(longest, outcome.seconds);
  }
  result.seconds = longest;
  result.bytes_sent = result.bytes;
  result.spread = SpreadOf(SumIntervalRates(interval_rates));
  if (longest > 0) {
    result.throughput_bytes_per_second = static_cast<double>(result.bytes) / longest;
  }
}

// A staging peer's copies belong to each rail's transfer (the bytes are in device memory only
// then): each rail's time grows by its peer's copy time, and the aggregate is taken again.
void AddPeerStaging(detail::InitiatorRun& run, const std::vector<double>& staging) {
  ProbeResult& result = run.result();
  double longest = 0;
  for (std::size_t index = 0; index < result.per_rail.size() && index < staging.size(); ++index) {
    RailThroughput& rail = result.per_rail[index];
    const double seconds =
        (rail.bytes_per_second > 0 ? static_cast<double>(rail.bytes) / rail.bytes_per_second : 0) +
        staging[index];
    rail.bytes_per_second = seconds > 0 ? static_cast<double>(rail.bytes) / seconds : 0;
    longest = std::max(longest, seconds);
  }
  if (longest <= result.seconds) return;
  result.seconds = longest;
  result.throughput_bytes_per_second = static_cast<double>(result.bytes) / longest;
}

// Each endpoint closes while every responder still serves; then the sessions end in turn. The
// peer's CPU time is the sum of its responders', when every one reported it. runs[i] is
// links[i]'s (empty for rails that never ran).
// Returns each link's peer staging time (0 unless the peer staged).
std::vector<double> FinishLinks(detail::InitiatorRun& run, Links& links,
                                const std::vector<RailRun>& runs) {
  ProbeResult& result = run.result();
  std::vector<double> staging(links.size(), 0);
  double peer_cpu = 0;
  bool every_peer_reported = !links.empty();
  for (std::size_t index = 0; index < links.size(); ++index) {
    const ThroughputOutcome& outcome = runs[index].outcome;
    const std::optional<json> report =
        links[index]->Finish(json{{"operation", UcxOperationName(run.params().operation)},
                                  {"bytes", outcome.bytes},
                                  {"seconds", outcome.seconds}},
                             run);
    staging[index] =
        links[index]->PeerStagingSeconds(report, run.params().operation, outcome.bytes);
    const std::optional<double> cpu = detail::PeerCpuSeconds(report);
    if (cpu) {
      peer_cpu += *cpu;
    } else {
      every_peer_reported = false;
    }
    for (const TransportLane& lane : links[index]->lanes()) result.lanes.push_back(lane);
    detail::AddFallbackRails(links[index]->lanes(), links[index]->rails(), &result);
  }
  if (every_peer_reported) result.peer_cpu_seconds = peer_cpu;
  return staging;
}

void MeasureEveryRailAtOnce(detail::InitiatorRun& run) {
  const detail::DeadlineWatchdog watchdog(run.deadline());
  const std::uint64_t size = detail::MessageSize(run.params(), kDefaultBytes);
  run.result().message_size_bytes = size;
  Links links;
  std::vector<RailRun> runs(run.params().rails.size());
  if (OpenLinks(run, size, &links)) {
    const std::chrono::nanoseconds duration =
        std::min<std::chrono::nanoseconds>(run.params().duration, run.deadline().Remaining());
    const auto& gpu = links.front()->gpu();
    detail::MidTransferLinkSpeed link_speed(gpu ? gpu->pci_bus_id : "", duration);
    DriveRails(run, size, links, watchdog.flag(), &runs);
    run.result().gpu_link_speed_gts = link_speed.Take();
    AddRailRuns(run, links, runs);
  }
  AddPeerStaging(run, FinishLinks(run, links, runs));
  // The first rail's GPU names the run; the staged path of any rail makes it staged.
  for (auto& link : links) {
    if (!link->gpu()) continue;
    if (run.result().gpu_pci_bus_id.empty() || link->MemoryPath() == "staged") {
      detail::RecordMemory(*link, &run.result());
    }
  }
}

}  // namespace

ProbeResult MultirailCapacityProbe::Run(const ProbeParams& params, const ProbeContext& context) {
  return detail::RunInitiator(
      {ProbeKind::kMultirailCapacity, detail::ValidateUcxParams(params, true, kDefaultBytes)},
      params, context, MeasureEveryRailAtOnce);
}

}  // namespace rail::probe
