#include "rail/commands/lifecycle.h"

#include <spdlog/spdlog.h>

namespace rail::commands {

sigset_t LifecycleSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, signal_number);
  return signals;
}

Lifecycle::Lifecycle(const sigset_t& signals) : signals_(signals) {
  thread_ = std::thread([this] { WaitForSignals(); });
}

Lifecycle::~Lifecycle() {
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
  }
  // A signal of its own set ends the thread's sigwait.
  pthread_kill(thread_.native_handle(), SIGTERM);
  thread_.join();
}

Lifecycle::Event Lifecycle::Wait() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return stop_ || reloads_ > 0; });
  if (stop_) return Event::kStop;
  --reloads_;
  return Event::kReload;
}

void Lifecycle::WaitForSignals() {
  while (true) {
    int signal_number = 0;
    sigwait(&signals_, &signal_number);
    std::lock_guard lock(mutex_);
    if (finished_) return;
    if (signal_number == SIGHUP) {
      ++reloads_;
    } else if (!stop_) {
      spdlog::info("received signal {}, shutting down", signal_number);
      stop_ = true;
    }
    changed_.notify_all();
  }
}

}  // namespace rail::commands
