// The probe worker: every UCX context (and, later, every CUDA context) lives in a separate
// process, `rail_exporter_probe_worker`, started by exec and supervised by the agent, so that a
// fatal error inside UCX (UCX 1.13 aborts the process when a peer dies during a put over tcp)
// ends that process only. The agent itself links neither UCX nor CUDA; it keeps serving
// /metrics, counts the worker's deaths by reason, restarts it with back-off and, past the crash
// loop cap, stops probing over UCX and says why (WorkerStatus).
//
// The pipe is a Unix stream socket, inherited by the worker as file descriptor 3
// (kWorkerChannelFd), carrying framed JSON (peer/framing.h):
//
//   A -> W  init    {secret_hex?, insecure, agent_version, sysfs_root, rails, remembered_nonces,
//                    log_level, log_format, cuda_library}
//   W -> A  hello   {ucx_version, pid, capabilities}
//   A -> W  run     {id, params}                      -> reply {id, ok, result}
//   A -> W  cancel  {id}                              (a run: its probe sees context.cancel)
//   A -> W  setup   {id, handler, kind, rails, request} -> reply {id, ok, fields | reason, message}
//   A -> W  serve   {id, handler}                     -> reply {id, ok} once Serve returned
//   A -> W  stop    {handler}                         (Serve's stop flag)
//   A -> W  report  {id, handler}                     -> reply {id, ok, report}
//   A -> W  close   {handler}
//
// A worker that loses the pipe ends its probes and exits (and the kernel kills it if the agent
// dies: PR_SET_PDEATHSIG). Calls fail with these reasons:
//   worker_crashed      the worker died while the call was in flight (the message names how, and
//                       the last fatal-looking line the worker wrote on its stderr: UCX's own)
//   worker_unavailable  no worker runs now (starting, backing off, crash loop, not installed)
// and, for a call that waits for a restart (a probe run: WorkerPolicy::max_restart_wait), which
// is then skipped rather than failed (rail/probe/skipped.h):
//   worker_restarting   the worker did not come back within the wait
//   crash_loop          restarts stopped after repeated deaths (WorkerStatus::detail says so)
//   worker_hung         no reply within the call's deadline; the worker is killed and restarted
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/gpu/driver.h"
#include "rail/gpu/gpudirect.h"
#include "rail/peer/responder.h"
#include "rail/peer/secret.h"
#include "rail/probe/probe.h"

namespace rail::probe {

inline constexpr int kWorkerChannelFd = 3;
inline constexpr const char* kWorkerExecutableName = "rail_exporter_probe_worker";

// Every rule of the supervision, in one place. A worker that answered a call before it died did
// useful work: a peer dying during a put can abort it (UCX 1.13), as often as peers die, and
// that is no crash loop. A worker that dies before answering anything (a broken UCX install, a
// crash at start) is: its restarts back off exponentially and, after crash_loop_deaths of them
// in a row, stop.
struct WorkerPolicy {
  // Before a restart: first_backoff after a death that followed useful work; doubled for each
  // death in a row without it, up to max_backoff.
  std::chrono::milliseconds first_backoff{1000};
  std::chrono::milliseconds max_backoff{60000};
  int crash_loop_deaths = 5;  // deaths in a row without an answered call: no more restarts
  // From exec to hello, which waits for the capabilities: cuInit on a host with many GPUs and
  // persistence mode off takes seconds.
  std::chrono::milliseconds start_timeout{30000};
  // Beyond a probe's own timeout before the worker counts as hung (a probe always ends itself).
  std::chrono::milliseconds call_grace{15000};
  // A probe run that finds the worker starting or backing off (another run's crash killed it)
  // waits for it instead of failing: until the restart under way should have said hello (the
  // rest of the back-off, then start_timeout), and never longer than this. The wait is no run;
  // a run still without a worker then is skipped (worker_restarting), as is one that finds a
  // crash loop (at once).
  std::chrono::milliseconds max_restart_wait{30000};
};

// What the worker needs to run probes as the agent would.
struct WorkerInit {
  std::shared_ptr<const peer::Secret> secret;  // nullptr: insecure
  std::string agent_version;
  std::string sysfs_root = "/sys";
  std::vector<ProbeRail> rails;  // every rail of this host
  std::size_t remembered_nonces = 4096;
  std::string log_level = "info";
  std::string log_format = "logfmt";
  // The CUDA driver the worker loads (agent flag --cuda.library); the agent never loads it.
  std::string cuda_library = gpu::kCudaLibrary;
};

struct WorkerOptions {
  std::string executable;  // path of rail_exporter_probe_worker
  // "NAME=value" entries the worker gets in its environment on top of the agent's (the UCX
  // device quirks' workaround, probe/ucx_quirks.h): the worker's own, never the host's.
  std::vector<std::string> environment;
  WorkerInit init;
  WorkerPolicy policy;
  // Every wait of the supervision and of the calls (start, hello, back-off, exit grace, a call's
  // timeout, the wait for a restart) is measured on it; nullptr: base::SystemClock(). The
  // worker process keeps its own clock for UCX's progress and the probes' measurements.
  const base::Clock* clock = nullptr;
};

// What the worker found when it started (its hello) and `rail_exporter_probe_worker
// --capabilities` prints: the CUDA driver and devices, the NICs' dma-buf registration, and the
// memory types UCX takes (ucp_context_query, UCP_ATTR_FIELD_MEMORY_TYPES; UCS names: "host",
// "cuda", "cuda-managed", ...). Debian's UCX 1.13 is built without CUDA: host only.
struct WorkerCapabilities {
  gpu::DriverReport cuda;
  std::vector<gpu::DmaBufSupport> dma_buf;
  bool ucx_memory_types_known = false;
  std::vector<std::string> ucx_memory_types;
};
nlohmann::json CapabilitiesToJson(const WorkerCapabilities& capabilities);
WorkerCapabilities CapabilitiesFromJson(const nlohmann::json& json);  // lenient: missing = empty
// Runs `executable --capabilities --cuda.library=<cuda_library> --path.sysfs=<sysfs_root>` to
// completion; nullopt and `error` when it cannot. The worker asks its own executable this way at
// start, so that the CUDA driver it initialises dies with that short-lived process: a worker that
// runs no GPU-memory probe never holds /dev/nvidia* (which would block GPU resets, MIG changes
// and driver upgrades).
std::optional<WorkerCapabilities> QueryWorkerCapabilities(
    const std::string& executable, std::string* error,
    const std::string& cuda_library = gpu::kCudaLibrary, const std::string& sysfs_root = "/sys");

enum class WorkerState { kStarting, kRunning, kBackingOff, kCrashLoop, kStopped };
const char* WorkerStateName(WorkerState state);  // "starting", "running", ...

struct WorkerStatus {
  WorkerState state = WorkerState::kStarting;
  std::string last_death;  // reason of the last death ("sigabrt", "exit_1", "hung", ...)
  std::string detail;      // for people: why probes stopped, what the last death was
  std::map<std::string, std::uint64_t> restarts_by_reason;
  std::uint64_t calls_failed_by_crash = 0;         // runs and serves in flight when the worker died
  std::string ucx_version;                         // from the last hello; "" before the first
  std::optional<WorkerCapabilities> capabilities;  // from the last hello
  int pid = 0;                                     // 0 when none runs
};

class ProbeWorker {
 public:
  explicit ProbeWorker(WorkerOptions options);
  ~ProbeWorker();  // Stop()
  ProbeWorker(const ProbeWorker&) = delete;
  ProbeWorker& operator=(const ProbeWorker&) = delete;

  // Starts the supervision and waits for the first worker's hello (up to start_timeout, or until
  // `abandon` is set: an agent stopped while it starts). false with `error` when that worker did
  // not come up; the supervisor keeps trying in the background either way, until Stop.
  bool Start(std::string* error, const std::atomic<bool>* abandon = nullptr);
  // Ends the worker (its pipe closed, then SIGKILL after a short grace) and the supervision.
  void Stop();
  // The agent's stop deadline, before the runs are cancelled: a call still waiting for its reply
  // at `by` ends (cancelled) instead of waiting for the probe's drain, and the grace a worker
  // gets to exit ends at `by` at the latest.
  void StopBy(const base::Deadline& by);
  WorkerStatus Status() const;

  struct Reply {
    bool ok = false;
    nlohmann::json message;  // the worker's reply when ok
    std::string reason;      // worker_crashed, worker_unavailable, worker_hung, or the worker's
    std::string error;       // for people
  };
  // What a call that finds no worker does.
  enum class WhenNoWorker {
    kFail,          // fails at once: worker_unavailable (a handler's setup, serve or report)
    kAwaitRestart,  // a probe run: waits for the restart under way (max_restart_wait), then is
                    // skipped (worker_restarting, crash_loop) if the worker is not back
    kSkip,          // a probe run that already waited once: skipped at once (worker_restarting)
  };
  // Sends `request` (an id is added) and waits for its reply until `timeout` (then the worker is
  // hung: killed). When `cancel` becomes true, `on_cancel` (with the same id) is sent once and
  // the wait goes on; a wait for a restart ends at once (reason "cancelled"). Thread-safe.
  Reply Call(nlohmann::json request, std::chrono::milliseconds timeout,
             const std::atomic<bool>* cancel = nullptr, nlohmann::json on_cancel = nullptr,
             WhenNoWorker when_no_worker = WhenNoWorker::kFail);
  // Sends without waiting; false when no worker runs. `generation` (when not 0) must still be the
  // running worker's, so that a message meant for a dead worker never reaches its successor.
  bool Send(nlohmann::json message, std::uint64_t generation = 0);
  // Counts the workers started; a handler made by one worker is not known to the next.
  std::uint64_t Generation() const;
  std::uint64_t NewHandlerId();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Probes: the TCP kinds in this process, every other kind through `worker`.
ProbeMaker WorkerProbeMaker(ProbeWorker& worker);
// Responder halves of the UCX kinds, served by `worker`: a HandlerMaker (handler_factory.h),
// which has checked the kind and the rails.
std::unique_ptr<peer::ProbeSessionHandler> MakeWorkerHandler(ProbeWorker& worker, ProbeKind kind,
                                                             const std::vector<ProbeRail>& rails);

// The worker executable: `configured` when not empty, else kWorkerExecutableName beside the
// running executable, else in ../lib/rail_exporter/ from it (an installed layout).
std::string FindWorkerExecutable(const std::string& configured);
// What the handshake (which needs a non-empty version) and rail_exporter_build_info say when no
// worker can tell the UCX version.
inline constexpr const char* kUnknownUcxVersion = "unknown";
// Runs `executable --ucx-version` and returns what it prints (the UCX the worker loads), or
// kUnknownUcxVersion when it cannot.
std::string QueryWorkerUcxVersion(const std::string& executable);

}  // namespace rail::probe
