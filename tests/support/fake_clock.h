// Time that moves only when a test says so.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "rail/base/clock.h"

namespace rail::test {

class FakeClock final : public base::Clock {
 public:
  // Starts far from the epoch so that code which treats a zero time point as "never" is caught.
  FakeClock() : FakeClock(base::TimePoint{} + std::chrono::hours(1000)) {}
  explicit FakeClock(base::TimePoint start) : now_(start), start_(start) {}

  // Atomic: the threads of the code under test read it while the test moves it.
  base::TimePoint Now() const override { return now_.load(); }
  base::WallTime WallNow() const override { return wall_start_ + (now_.load() - start_); }
  // Waiters on the code's threads look again every millisecond: they see a move of the test's.
  base::Duration BlockFor(base::Duration remaining) const override {
    return std::min<base::Duration>(remaining, std::chrono::milliseconds(1));
  }
  void Advance(base::Duration by) { now_.store(now_.load() + by); }
  void Set(base::TimePoint to) { now_.store(to); }

 private:
  std::atomic<base::TimePoint> now_;
  const base::TimePoint start_;
  const base::WallTime wall_start_{std::chrono::hours(24 * 365 * 50)};
};

// Time that moves by `step` each time anyone reads it, from any thread: every deadline set on it
// has passed by the next reading. A wait that ends on time with this clock and a timeout of
// hours takes its time from the injected clock; one that read the real clock would hang.
class SteppingClock final : public base::Clock {
 public:
  explicit SteppingClock(base::Duration step) : step_(step) {}

  base::TimePoint Now() const override { return base::TimePoint{} + Advance(); }
  base::WallTime WallNow() const override { return base::WallTime{} + Advance(); }

 private:
  base::Duration Advance() const { return step_ * (ticks_.fetch_add(1) + 1); }

  const base::Duration step_;
  mutable std::atomic<std::int64_t> ticks_{1000};
};

}  // namespace rail::test
