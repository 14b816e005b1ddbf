// HealthLog: one log line per change of a verdict, so that the log tells when a rail went bad
// and when it recovered without repeating itself every scrape.
#include <spdlog/spdlog.h>

#include <set>

#include "rail/health/checks.h"

namespace rail::health {
namespace {

void Log(const CheckResult& result) {
  spdlog::log(result.ok ? spdlog::level::info : spdlog::level::warn,
              "check changed check={} rail={} peer={} ok={} reason=\"{}\"", result.check,
              result.rail, result.peer,
              result.held_back ? "held_back"
              : result.ok      ? "true"
                               : "false",
              result.reason);
}

}  // namespace

void HealthLog::Observe(const std::vector<CheckResult>& results) {
  std::lock_guard lock(mutex_);
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const auto& result : results) {
    auto key = std::make_tuple(result.check, result.rail, result.peer);
    seen.insert(key);
    const auto previous = last_.find(key);
    if (previous == last_.end()) {
      // A verdict seen for the first time is news only when it fails: a starting agent (or a
      // new rail) should not log every passing check.
      if (!result.ok) Log(result);
      last_.emplace(std::move(key), result);
    } else if (previous->second.ok != result.ok || previous->second.held_back != result.held_back ||
               previous->second.reason != result.reason) {
      Log(result);
      previous->second = result;
    }
  }
  std::erase_if(last_, [&](const auto& entry) { return !seen.contains(entry.first); });
  first_ = false;
}

}  // namespace rail::health
