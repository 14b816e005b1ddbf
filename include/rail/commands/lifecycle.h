// The agent's process lifecycle as signals drive it: SIGINT and SIGTERM stop it, SIGHUP reloads
// its configuration. src/main.cc blocks these signals at its first instruction; a thread of this
// class takes them from then on, at any moment, during the agent's start too.
#pragma once

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>

namespace rail::commands {

// SIGINT, SIGTERM and SIGHUP: what the agent answers on its signal thread (Lifecycle).
sigset_t LifecycleSignals();

// What the signal thread tells the main thread: stop (SIGINT, SIGTERM) or reload (SIGHUP). The
// signal thread only sets flags.
class Lifecycle {
 public:
  enum class Event { kStop, kReload };

  // Starts the signal thread; `signals` must be blocked in every thread already.
  explicit Lifecycle(const sigset_t& signals);
  ~Lifecycle();  // ends the signal thread
  Lifecycle(const Lifecycle&) = delete;
  Lifecycle& operator=(const Lifecycle&) = delete;

  // Set once a stop was asked for; the agent's start looks at it (AgentOptions::stop_requested).
  const std::atomic<bool>* stop_requested() const { return &stop_; }
  // The next event; kStop once a stop was asked for, however many reloads are pending.
  Event Wait();

 private:
  void WaitForSignals();

  const sigset_t signals_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
  int reloads_ = 0;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace rail::commands
