// Injected time: everything that waits, expires, rate-limits or stamps a result asks a Clock, so
// that tests drive it with a fake (tests/support/fake_clock.h) and never sleep.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>

namespace rail::base {

using Duration = std::chrono::steady_clock::duration;
using TimePoint = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time, for deadlines, intervals and rate limits.
  virtual TimePoint Now() const = 0;
  // Wall-clock time, only for timestamps people and Prometheus read.
  virtual WallTime WallNow() const = 0;
  // How long a thread may block in real time (a condition variable's wait, poll()) while it waits
  // for `remaining` of this clock: all of it on the real clock. A fake clock answers a short
  // slice, so that a waiter reads it again soon after a test moves it.
  virtual Duration BlockFor(Duration remaining) const { return remaining; }
};

// Monotonic for everything that measures: wall-clock steps (NTP, an operator's `date -s`) must
// not fire or starve probes.
class SteadyClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
};

// The process's clock, for code that has no reason to be handed another one.
const Clock& SystemClock();

// The end of a wait, on the clock it was set by: what a socket's poll() or a library's timeout
// is given is Remaining(), so a test that hands in a fake clock decides when every wait ends.
class Deadline {
 public:
  static Deadline After(const Clock& clock, Duration timeout) {
    return Deadline(clock, clock.Now() + timeout);
  }
  Deadline(const Clock& clock, TimePoint at) : clock_(&clock), at_(at) {}

  // The same deadline, also passed once `abandon` is set (the agent stops): every wait on it
  // looks at the flag at least every kAbandonSlice. `abandon` must outlive the deadline.
  Deadline OrWhenSet(const std::atomic<bool>& abandon) const {
    Deadline sooner = *this;
    sooner.abandon_ = &abandon;
    return sooner;
  }
  static constexpr std::chrono::milliseconds kAbandonSlice{100};

  TimePoint at() const { return at_; }
  bool Abandoned() const { return abandon_ != nullptr && abandon_->load(); }
  bool Passed() const { return Abandoned() || clock_->Now() >= at_; }
  // Never negative; zero once abandoned.
  Duration Remaining() const {
    const auto left = at_ - clock_->Now();
    return left > Duration::zero() && !Abandoned() ? left : Duration::zero();
  }
  // What a blocking call (poll(), a condition variable) is given: Remaining(), or the clock's
  // slice of it (Clock::BlockFor), or at most kAbandonSlice while a flag can cut it short. The
  // caller reads Passed() again when it returns.
  Duration BlockFor() const {
    const Duration block = clock_->BlockFor(Remaining());
    return abandon_ == nullptr ? block : std::min<Duration>(block, kAbandonSlice);
  }
  // BlockFor() in whole milliseconds, rounded up and at most a minute, for poll(); 0 once passed.
  int PollMilliseconds() const {
    const auto block = std::chrono::ceil<std::chrono::milliseconds>(BlockFor()).count();
    return static_cast<int>(std::min<decltype(block)>(block, 60'000));
  }

 private:
  const Clock* clock_;
  TimePoint at_;
  const std::atomic<bool>* abandon_ = nullptr;
};

// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID), in seconds; 0 if it cannot be
// read. What a probe or a discovery fetch cost, read before and after: a measurement, never a
// decision, so it is no Clock's.
double ThreadCpuSeconds();

}  // namespace rail::base
