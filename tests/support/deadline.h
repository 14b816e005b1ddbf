// Deadlines for tests that talk to real sockets: `timeout` from now on the process clock.
#pragma once

#include "rail/base/clock.h"

namespace rail::test {

inline base::Deadline In(base::Duration timeout) {
  return base::Deadline::After(base::SystemClock(), timeout);
}

}  // namespace rail::test
