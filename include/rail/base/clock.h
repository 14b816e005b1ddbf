// Injected time: everything that waits, expires, rate-limits or stamps a result asks a Clock, so
// that tests drive it with a fake (tests/support/fake_clock.h) and never sleep.
#pragma once

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

// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID), in seconds; 0 if it cannot be
// read. What a probe or a discovery fetch cost, read before and after: a measurement, never a
// decision, so it is no Clock's.
double ThreadCpuSeconds();

}  // namespace rail::base
