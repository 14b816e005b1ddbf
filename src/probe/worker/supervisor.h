// ProbeWorker's inside (worker.h): one supervision thread runs the worker's life — spawn, init,
// hello, read replies, reap, back off — while any thread makes calls.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "probe/worker/channel.h"
#include "probe/worker/restart_policy.h"
#include "probe/worker/stderr_relay.h"
#include "rail/probe/worker.h"

namespace rail::probe {

struct ProbeWorker::Impl {
  explicit Impl(WorkerOptions worker_options)
      : options(std::move(worker_options)),
        clock(options.clock != nullptr ? *options.clock : base::SystemClock()),
        restarts(options.policy) {}

  struct Pending {
    bool done = false;
    Reply reply;
  };

  void Supervise();
  // One worker's life, from spawn to reaped; false when it never came up.
  bool RunOnce();
  bool AwaitHello(worker::Channel& channel);
  void ReadReplies(worker::Channel& channel);
  // Waits for the worker's end, then ends its stderr relay: the calls still in flight fail
  // worker_crashed with the last fatal line it wrote.
  void Reap(pid_t pid, const std::string& fallback_reason, worker::StderrRelay& relay);
  void FailPending(const std::string& reason, const std::string& message);
  // false when the agent stops during the wait.
  bool WaitBeforeRestart(const base::Deadline& restart);
  nlohmann::json InitMessage() const;
  void KillWorker(const std::string& reason);
  // The reply of a call that finds no worker (under mutex).
  Reply Unavailable() const;
  // The skip of a run whose worker did not come back within `waited`, or, when the run
  // `may_wait` no more, at once (under mutex).
  Reply NotBack(base::Duration waited, bool may_wait) const;
  // A probe run that finds no worker waits for the restart under way (when it `may_wait`: up to
  // WorkerPolicy::max_restart_wait) or until `cancel`: nullopt once a worker runs, else the
  // reply that ends the call (skipped: worker_restarting, crash_loop; or cancelled,
  // worker_unavailable).
  std::optional<Reply> AwaitRestart(std::unique_lock<std::mutex>& lock, bool may_wait,
                                    const std::atomic<bool>* cancel);

  WorkerOptions options;
  const base::Clock& clock;  // options.clock's, or the process's
  worker::RestartPolicy restarts;

  mutable std::mutex mutex;
  std::condition_variable changed;
  bool stopping = false;
  std::optional<base::Deadline> stop_by;  // the agent's stop deadline, once it stops (StopBy)
  WorkerStatus status;
  std::shared_ptr<worker::Channel> channel;  // the running worker's, nullptr when none
  // The pipe of a worker that has not said hello yet, for Stop to end its wait.
  std::shared_ptr<worker::Channel> starting_channel;
  pid_t pid = -1;
  // When the current worker was spawned, and when the back-off under way ends.
  base::TimePoint started_at = clock.Now();
  base::TimePoint restart_at = started_at;
  std::string kill_reason;  // set when the agent killed the worker (hung), else ""
  std::uint64_t generation = 0;
  bool answered = false;  // the running worker has answered a call
  std::uint64_t next_id = 1;
  std::map<std::uint64_t, Pending> pending;
  std::thread thread;
};

}  // namespace rail::probe
