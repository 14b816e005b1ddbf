// Logging: spdlog's default logger, set up once by main, and one way to keep a flood of the same
// event (a client retrying wrong passwords, a connection storm) from flooding the log.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "rail/base/clock.h"

namespace rail::base {

// --log.level: debug, info, warn, error. --log.format: logfmt or json. Logs go to stderr.
// Throws InputError for values outside those.
void ConfigureLogging(const std::string& level, const std::string& format);

// Lets one event through per interval and counts the ones it held back, so that the next line
// that gets through can say how many were not logged. Thread-safe.
class RateLimitedLog {
 public:
  RateLimitedLog(Duration interval, const Clock& clock = SystemClock())
      : interval_(interval), clock_(clock) {}

  // True when this event may be logged now; `*suppressed` is then the number of events held back
  // since the last one that was logged.
  bool Admit(std::uint64_t* suppressed);

 private:
  const Duration interval_;
  const Clock& clock_;
  std::mutex mutex_;
  TimePoint next_{};
  std::uint64_t held_back_ = 0;
};

}  // namespace rail::base
