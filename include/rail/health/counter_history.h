// Counter samples kept across scrapes, for the checks judged on how much a counter rose within a
// window (fabric_window_seconds) rather than on its value: a counter that is high but flat is
// history, one that rises now is a fault now.
//
// * The first sample of a counter gives no delta, hence no verdict.
// * A counter lower than its previous sample was reset (driver reload, NIC reset, counter
//   cleared): its history restarts there, and it gives no delta until a second sample.
// * The delta runs from the newest sample at least one window before the latest one (else the
//   oldest kept) to the latest. With scrapes sparser than the window, that is the previous
//   scrape: the verdict then covers the whole time since it, and its reason says how long.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "rail/base/clock.h"

namespace rail::health {

struct CounterDelta {
  double increase = 0;
  base::Duration span{};  // time between the two samples
};

class CounterHistory {
 public:
  // Records `value` of the counter `key` at `now`; drops samples older than needed for `window`,
  // and counters not seen for ten windows (a rail or priority gone).
  void Observe(const std::string& key, base::TimePoint now, std::uint64_t value,
               base::Duration window);
  // The counter's increase over the window ending at its latest sample, or nullopt (fewer than
  // two samples since it appeared or was reset).
  std::optional<CounterDelta> Delta(const std::string& key, base::Duration window) const;

 private:
  struct Sample {
    base::TimePoint at;
    std::uint64_t value;
  };
  void Forget(base::TimePoint now, base::Duration window);

  mutable std::mutex mutex_;  // the scrape and the landing page evaluate from their own threads
  std::map<std::string, std::deque<Sample>> samples_;
  base::TimePoint last_forget_{};
};

}  // namespace rail::health
