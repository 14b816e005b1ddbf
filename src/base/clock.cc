#include "rail/base/clock.h"

#include <ctime>

namespace rail::base {

const Clock& SystemClock() {
  static const SteadyClock kClock;
  return kClock;
}

double ThreadCpuSeconds() {
  timespec now{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace rail::base
