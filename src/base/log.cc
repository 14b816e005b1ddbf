#include "rail/base/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "rail/base/errors.h"

namespace rail::base {
namespace {

// The message as a quoted, escaped string: a message with quotes or newlines must not break a
// logfmt or JSON line.
class QuotedMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& message, const std::tm&,
              spdlog::memory_buf_t& out) override {
    const std::string text(message.payload.data(), message.payload.size());
    const std::string quoted =
        nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out.append(quoted.data(), quoted.data() + quoted.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<QuotedMessage>();
  }
};

// node_exporter's level names (spdlog says "warning" and "critical").
class LevelName final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& message, const std::tm&,
              spdlog::memory_buf_t& out) override {
    const char* name = "info";
    switch (message.level) {
      case spdlog::level::trace:
      case spdlog::level::debug:
        name = "debug";
        break;
      case spdlog::level::warn:
        name = "warn";
        break;
      case spdlog::level::err:
      case spdlog::level::critical:
        name = "error";
        break;
      default:
        break;
    }
    out.append(name, name + std::strlen(name));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<LevelName>();
  }
};

}  // namespace

void ConfigureLogging(const std::string& level, const std::string& format) {
  const auto parsed = spdlog::level::from_str(level);
  if ((parsed == spdlog::level::off && level != "off") ||
      (level != "debug" && level != "info" && level != "warn" && level != "error")) {
    throw InputError("--log.level: expected debug, info, warn or error, got '" + level + "'");
  }
  std::string pattern;
  if (format == "logfmt") {
    pattern = "ts=%Y-%m-%dT%H:%M:%S.%eZ level=%k msg=%*";
  } else if (format == "json") {
    pattern = R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%k","msg":%*})";
  } else {
    throw InputError("--log.format: expected logfmt or json, got '" + format + "'");
  }
  auto logger = std::make_shared<spdlog::logger>("rail_exporter",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<QuotedMessage>('*').add_flag<LevelName>('k').set_pattern(pattern);
  logger->set_formatter(std::move(formatter));
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
}

bool RateLimitedLog::Admit(std::uint64_t* suppressed) {
  const TimePoint now = clock_.Now();
  std::lock_guard lock(mutex_);
  if (now < next_) {
    ++held_back_;
    return false;
  }
  *suppressed = std::exchange(held_back_, 0);
  next_ = now + interval_;
  return true;
}

}  // namespace rail::base
