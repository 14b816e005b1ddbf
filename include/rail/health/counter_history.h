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
// * Counters come in readings (every counter of every rail, read by a scrape or by the fabric
//   sampler), recorded whole or not at all: of two readings made at once, the one recorded second
//   may hold older values under a later time, which would look like a reset. So a reading is
//   recorded only if no other was recorded since it began (Readings() before it read anything).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rail/base/clock.h"

namespace rail::health {

struct CounterDelta {
  double increase = 0;
  base::Duration span{};  // time between the two samples
};

// One reading: each counter's key and value.
using CounterReading = std::vector<std::pair<std::string, std::uint64_t>>;

class CounterHistory {
 public:
  // Readings recorded so far; a reader takes it before it reads anything.
  std::uint64_t Readings() const;
  // When the latest reading was recorded; nullopt before the first.
  std::optional<base::TimePoint> LatestReadingAt() const;
  // Records every counter of `reading` at `now`, unless a reading was recorded after the reader
  // took `readings_before` (Readings()); returns whether it did. Drops samples older than needed
  // for `window`, and counters not seen for ten windows (a rail or priority gone).
  bool Record(std::uint64_t readings_before, base::TimePoint now, const CounterReading& reading,
              base::Duration window);
  // The counter's increase over the window ending at its latest sample, or nullopt (fewer than
  // two samples since it appeared or was reset).
  std::optional<CounterDelta> Delta(const std::string& key, base::Duration window) const;

 private:
  struct Sample {
    base::TimePoint at;
    std::uint64_t value;
  };
  void Observe(const std::string& key, base::TimePoint now, std::uint64_t value,
               base::Duration window);
  void Forget(base::TimePoint now, base::Duration window);

  // The scrapes, the landing page and the fabric sampler read and record from their own threads.
  mutable std::mutex mutex_;
  std::map<std::string, std::deque<Sample>> samples_;
  std::uint64_t readings_ = 0;
  std::optional<base::TimePoint> latest_reading_at_;
  base::TimePoint last_forget_{};
};

}  // namespace rail::health
