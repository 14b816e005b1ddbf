// Recorded `ethtool -S` / `ethtool -i` output, for fixture trees and hosts captured elsewhere, and
// the checks every source's names go through.
#include <linux/ethtool.h>

#include <algorithm>
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

// What ethtool prints besides statistics: its header, and its answer for a driver with none.
bool IsNotAStatistic(std::string_view line) {
  return line.empty() || line == "NIC statistics:" || line == "no stats available";
}

// A name that can go into a reason, a log line or a label value as it is.
bool IsPrintableName(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// Counts what did not parse and keeps the first, made printable, for the reason and the log.
void Skip(std::string_view what, EthtoolStatistics& statistics) {
  if (statistics.unparsable++ > 0) return;
  constexpr std::size_t kShown = 80;
  for (const char c : what.substr(0, kShown)) {
    statistics.first_unparsable += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
}

}  // namespace

EthtoolStatistics ParseEthtoolDump(std::string_view text) {
  EthtoolStatistics statistics;
  ForEachLine(text, [&](std::string_view line) {
    const auto trimmed = Trim(line);
    if (IsNotAStatistic(trimmed)) return;
    const auto colon = line.rfind(": ");
    const auto name =
        colon == std::string_view::npos ? std::string_view() : Trim(line.substr(0, colon));
    const auto digits =
        colon == std::string_view::npos ? std::string_view() : Trim(line.substr(colon + 2));
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (!IsPrintableName(name) || digits.empty() || error != std::errc() ||
        end != digits.data() + digits.size()) {
      Skip(trimmed, statistics);
      return;
    }
    statistics.names.emplace_back(name);
    statistics.values.push_back(value);
  });
  return statistics;
}

EthtoolStatistics DecodeStatistics(std::string_view strings,
                                   std::span<const std::uint64_t> values) {
  EthtoolStatistics statistics;
  const std::size_t count = std::min(strings.size() / ETH_GSTRING_LEN, values.size());
  statistics.names.reserve(count);
  statistics.values.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    auto name = strings.substr(i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
    name = name.substr(0, std::min(name.find('\0'), name.size()));
    if (!IsPrintableName(name)) {
      Skip(name, statistics);
      continue;
    }
    statistics.names.emplace_back(name);
    statistics.values.push_back(values[i]);
  }
  return statistics;
}

std::optional<std::string> ParseDriverInfo(std::string_view text) {
  std::optional<std::string> driver;
  ForEachLine(text, [&](std::string_view line) {
    constexpr std::string_view kKey = "driver:";
    if (driver || !line.starts_with(kKey)) return;
    const auto value = Trim(line.substr(kKey.size()));
    if (IsPrintableName(value)) driver.emplace(value);
  });
  return driver;
}

std::optional<PauseParameters> ParsePauseParameters(std::string_view text) {
  std::optional<bool> autoneg, rx, tx;
  ForEachLine(text, [&](std::string_view line) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const auto key = Trim(line.substr(0, colon));
    const auto value = Trim(line.substr(colon + 1));
    if (value != "on" && value != "off") return;
    const bool on = value == "on";
    if (key == "Autonegotiate") autoneg = on;
    if (key == "RX") rx = on;
    if (key == "TX") tx = on;
  });
  if (!autoneg || !rx || !tx) return std::nullopt;
  return PauseParameters{*autoneg, *rx, *tx};
}

std::optional<std::vector<PrivateFlag>> ParsePrivateFlags(std::string_view text) {
  std::vector<PrivateFlag> flags;
  bool parsed = true;
  ForEachLine(text, [&](std::string_view line) {
    const auto trimmed = Trim(line);
    if (trimmed.empty() || trimmed.starts_with("Private flags for ")) return;
    // ethtool pads names to the longest one: "fw-lldp-agent      : on".
    const auto colon = trimmed.rfind(':');
    const auto name =
        colon == std::string_view::npos ? std::string_view{} : Trim(trimmed.substr(0, colon));
    const auto value =
        colon == std::string_view::npos ? std::string_view{} : Trim(trimmed.substr(colon + 1));
    if (!IsPrintableName(name) || (value != "on" && value != "off")) {
      parsed = false;
      return;
    }
    flags.push_back({std::string(name), value == "on"});
  });
  if (!parsed) return std::nullopt;
  return flags;
}

int DumpStatisticsSource::Read(const std::string& netdev, EthtoolStatistics* out) const {
  std::string text;
  if (const int error = dumps_.ReadFile(netdev, &text); error != 0) return error;
  *out = ParseEthtoolDump(text);
  if (out->names.empty() && out->unparsable == 0) return EOPNOTSUPP;
  return 0;
}

std::optional<std::string> DumpStatisticsSource::Driver(const std::string& netdev) const {
  std::string text;
  if (dumps_.ReadFile(netdev + ".info", &text) != 0) return std::nullopt;
  return ParseDriverInfo(text);
}

std::optional<PauseParameters> DumpStatisticsSource::Pause(const std::string& netdev) const {
  std::string text;
  if (dumps_.ReadFile(netdev + ".pause", &text) != 0) return std::nullopt;
  return ParsePauseParameters(text);
}

std::optional<std::vector<PrivateFlag>> DumpStatisticsSource::PrivateFlags(
    const std::string& netdev) const {
  std::string text;
  if (dumps_.ReadFile(netdev + ".priv-flags", &text) != 0) return std::nullopt;
  return ParsePrivateFlags(text);
}

}  // namespace rail::nic
