// Waiting on a condition variable until a Deadline of an injected clock: the deadline, not the
// condition variable's own clock, decides when the wait ends.
#pragma once

#include <condition_variable>
#include <mutex>

#include "rail/base/clock.h"

namespace rail::base {

// Waits until `done()` holds (true) or `deadline` has passed (done()'s value then). `changed`
// must be notified when what done() reads changes; each real wait is the deadline's BlockFor().
template <typename Predicate>
bool WaitUntil(std::condition_variable& changed, std::unique_lock<std::mutex>& lock,
               const Deadline& deadline, Predicate done) {
  while (!done()) {
    if (deadline.Passed()) return done();
    changed.wait_for(lock, deadline.BlockFor());
  }
  return true;
}

}  // namespace rail::base
