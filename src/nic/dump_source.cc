// Recorded `ethtool -S` / `ethtool -i` output, for fixture trees and hosts captured elsewhere.
#include <cerrno>
#include <charconv>

#include "rail/nic/ethtool.h"

namespace rail::nic {
namespace {

std::string_view Trim(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  const auto end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

// Calls `line` for each line of `text`.
template <typename Fn>
void ForEachLine(std::string_view text, Fn line) {
  while (!text.empty()) {
    const auto end = text.find('\n');
    line(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

}  // namespace

std::optional<EthtoolStatistics> ParseEthtoolDump(std::string_view text) {
  EthtoolStatistics statistics;
  ForEachLine(text, [&](std::string_view line) {
    const auto colon = line.rfind(": ");
    if (colon == std::string_view::npos) return;
    const auto name = Trim(line.substr(0, colon));
    const auto digits = Trim(line.substr(colon + 2));
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (name.empty() || error != std::errc() || end != digits.data() + digits.size()) return;
    statistics.names.emplace_back(name);
    statistics.values.push_back(value);
  });
  if (statistics.names.empty()) return std::nullopt;
  return statistics;
}

std::optional<std::string> ParseDriverInfo(std::string_view text) {
  std::optional<std::string> driver;
  ForEachLine(text, [&](std::string_view line) {
    constexpr std::string_view kKey = "driver:";
    if (driver || !line.starts_with(kKey)) return;
    const auto value = Trim(line.substr(kKey.size()));
    if (!value.empty()) driver.emplace(value);
  });
  return driver;
}

int DumpStatisticsSource::Read(const std::string& netdev, EthtoolStatistics* out) const {
  std::string text;
  if (const int error = dumps_.ReadFile(netdev, &text); error != 0) return error;
  auto parsed = ParseEthtoolDump(text);
  if (!parsed) return EOPNOTSUPP;
  *out = std::move(*parsed);
  return 0;
}

std::optional<std::string> DumpStatisticsSource::Driver(const std::string& netdev) const {
  std::string text;
  if (dumps_.ReadFile(netdev + ".info", &text) != 0) return std::nullopt;
  return ParseDriverInfo(text);
}

}  // namespace rail::nic
