// Injected time (DESIGN.md rule 2): everything that waits, expires or rate-limits asks a Clock, so
// tests drive it with FakeClock and never sleep.
#pragma once

#include <chrono>

namespace rail::schedule {

using Duration = std::chrono::steady_clock::duration;
using TimePoint = std::chrono::steady_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

// Monotonic: wall-clock steps (NTP, an operator's `date -s`) must not fire or starve probes.
class SteadyClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
};

// Time moves only when a test says so.
class FakeClock final : public Clock {
 public:
  // Starts far from the epoch so that code which treats a zero time point as "never" is caught.
  FakeClock() : now_(TimePoint{} + std::chrono::hours(1000)) {}
  explicit FakeClock(TimePoint start) : now_(start) {}

  TimePoint Now() const override { return now_; }
  void Advance(Duration by) { now_ += by; }
  void Set(TimePoint to) { now_ = to; }

 private:
  TimePoint now_;
};

}  // namespace rail::schedule
