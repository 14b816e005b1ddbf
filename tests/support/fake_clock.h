// Time that moves only when a test says so.
#pragma once

#include "rail/base/clock.h"

namespace rail::test {

class FakeClock final : public base::Clock {
 public:
  // Starts far from the epoch so that code which treats a zero time point as "never" is caught.
  FakeClock() : now_(base::TimePoint{} + std::chrono::hours(1000)) {}
  explicit FakeClock(base::TimePoint start) : now_(start) {}

  base::TimePoint Now() const override { return now_; }
  base::WallTime WallNow() const override { return wall_start_ + (now_ - start_); }
  void Advance(base::Duration by) { now_ += by; }
  void Set(base::TimePoint to) { now_ = to; }

 private:
  base::TimePoint now_;
  const base::TimePoint start_ = now_;
  const base::WallTime wall_start_{std::chrono::hours(24 * 365 * 50)};
};

}  // namespace rail::test
