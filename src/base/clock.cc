#include "rail/base/clock.h"

namespace rail::base {

const Clock& SystemClock() {
  static const SteadyClock kClock;
  return kClock;
}

}  // namespace rail::base
