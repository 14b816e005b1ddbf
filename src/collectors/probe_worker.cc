// The probe worker process that holds UCX (rail/probe/worker.h): whether it runs, its state, and
// its deaths by reason, so that a crash loop is seen on the dashboard, not only in the log; and
// the probe runs it could not run (skipped).
#include "collectors/families.h"
#include "collectors/registry.h"

namespace rail::collectors {
namespace {

constexpr probe::WorkerState kStates[] = {
    probe::WorkerState::kStarting, probe::WorkerState::kRunning, probe::WorkerState::kBackingOff,
    probe::WorkerState::kCrashLoop, probe::WorkerState::kStopped};

class ProbeWorkerCollector final : public Collector {
 public:
  std::string Name() const override { return "probe_worker"; }
  std::string Help() const override {
    return "The supervised process running UCX probes: state, restarts by reason";
  }

  void Collect(Scrape& snapshot, std::vector<prometheus::MetricFamily>& out) override {
    CollectSkipped(snapshot, out);
    if (!snapshot.sources().probe_worker) return;
    const std::optional<probe::WorkerStatus> status = snapshot.sources().probe_worker();
    if (!status) return;
    const bool up = status->state == probe::WorkerState::kRunning;
    detail::Gauge("rail_exporter_probe_worker_up",
                  "1 when the probe worker process runs and answers; probes over UCX need it.")
        .Add({}, up ? 1 : 0)
        .MoveTo(out);
    auto state = detail::Gauge(
        "rail_exporter_probe_worker_state",
        "The probe worker's state, 1 for the current one; crash_loop: restarts stopped after "
        "repeated deaths (UCX probes stopped, inventory still served).");
    for (const auto candidate : kStates) {
      state.Add({{"state", probe::WorkerStateName(candidate)}}, candidate == status->state ? 1 : 0);
    }
    state.MoveTo(out);
    auto restarts = detail::Counter(
        "rail_exporter_probe_worker_restarts_total",
        "Probe worker restarts after it died, by how it died (sigabrt, sigsegv, sigkill, exit_N, "
        "hung: killed for not answering, start_failed, spawn_failed).");
    for (const auto& [reason, count] : status->restarts_by_reason) {
      restarts.Add({{"reason", reason}}, static_cast<double>(count));
    }
    restarts.MoveTo(out);
    detail::Counter("rail_exporter_probe_worker_failed_calls_total",
                    "Probes and responder halves in flight when the probe worker died; they "
                    "failed with reason worker_crashed.")
        .Add({}, static_cast<double>(status->calls_failed_by_crash))
        .MoveTo(out);
  }

 private:
  // Runs that never ran: neither runs nor errors of their series (rail_probe_runs_total).
  static void CollectSkipped(Scrape& snapshot, std::vector<prometheus::MetricFamily>& out) {
    const probe::ResultStore* store = snapshot.results();
    if (store == nullptr) return;
    auto skipped = detail::Counter(
        "rail_probe_skipped_total",
        "Probe runs skipped because the probe worker could not run them: worker_restarting (it "
        "did not come back from a restart within the wait), crash_loop (its restarts stopped). "
        "Not runs of their series: nothing was measured.");
    for (const auto& [key, count] : store->SkippedCounts()) {
      skipped.Add(
          {{"kind", key.kind}, {"peer", key.peer}, {"rail", key.rail}, {"reason", key.reason}},
          static_cast<double>(count));
    }
    skipped.MoveTo(out);
  }
};

}  // namespace

std::unique_ptr<Collector> MakeProbeWorkerCollector() {
  return std::make_unique<ProbeWorkerCollector>();
}

}  // namespace rail::collectors
