#include "rail/sysfs/values.h"

#include <array>
#include <charconv>
#include <limits>

namespace rail::sysfs {
namespace {

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char a = text[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (a != prefix[i]) return false;
  }
  return true;
}

// from_chars must consume the whole text: "12abc" is malformed, not 12.
template <typename T>
std::optional<T> FromCharsExact(std::string_view text, int base) {
  if (text.empty()) return std::nullopt;
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

std::string_view TrimValue(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

std::optional<std::uint64_t> ParseUnsigned(std::string_view text) {
  text = TrimValue(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    return FromCharsExact<std::uint64_t>(text.substr(2), 16);
  }
  return FromCharsExact<std::uint64_t>(text, 10);
}

std::optional<std::int64_t> ParseSigned(std::string_view text) {
  return FromCharsExact<std::int64_t>(TrimValue(text), 10);
}

std::optional<NumberedState> ParseNumberedState(std::string_view text) {
  text = TrimValue(text);
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto id = FromCharsExact<std::uint32_t>(TrimValue(text.substr(0, colon)), 10);
  if (!id) return std::nullopt;
  return NumberedState{*id, std::string(TrimValue(text.substr(colon + 1)))};
}

std::optional<PortRate> ParsePortRate(std::string_view text) {
  text = TrimValue(text);
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  // The kernel prints plain decimals; from_chars alone would also take "inf", "nan" and "-1".
  const std::string_view number = text.substr(0, space);
  if (number.front() < '0' || number.front() > '9') return std::nullopt;
  double gigabits = 0;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), gigabits,
                                   std::chars_format::fixed);
  if (ec != std::errc() || ptr != number.data() + number.size()) return std::nullopt;
  std::string_view rest = TrimValue(text.substr(space));
  // Old kernels and procfs' fixtures spell the unit "GB/sec"; it is gigabits either way.
  constexpr std::string_view kUnit = "gb/sec";
  if (!StartsWithNoCase(rest, kUnit)) return std::nullopt;
  rest = TrimValue(rest.substr(kUnit.size()));
  PortRate rate;
  rate.gigabits_per_second = gigabits;
  if (rest.empty()) return rate;
  if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return std::nullopt;
  rate.width_and_speed = std::string(TrimValue(rest.substr(1, rest.size() - 2)));
  const std::size_t gap = rate.width_and_speed.find(' ');
  rate.width = rate.width_and_speed.substr(0, gap);
  if (gap != std::string::npos) {
    rate.speed = std::string(TrimValue(std::string_view(rate.width_and_speed).substr(gap)));
  }
  return rate;
}

std::optional<CounterText> ParseCounterText(std::string_view text) {
  text = TrimValue(text);
  CounterText counter;
  // The kernel prints "N/A (no PMA)" when the device has no performance management agent.
  if (text.substr(0, 3) == "N/A") {
    counter.not_available = true;
    return counter;
  }
  counter.value = ParseUnsigned(text);
  if (!counter.value) return std::nullopt;
  return counter;
}

bool IsSaturated(std::uint64_t value, unsigned width_bits) {
  if (width_bits == 0) return false;
  if (width_bits >= 64) return value == std::numeric_limits<std::uint64_t>::max();
  // Equality on purpose: a value above the maximum proves the counter is wider than assumed,
  // not that it stopped counting.
  return value == (std::uint64_t{1} << width_bits) - 1;
}

bool Gid::IsEmpty() const {
  for (unsigned char b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

bool Gid::IsIpv4Mapped() const {
  for (int i = 0; i < 10; ++i) {
    if (bytes[i] != 0) return false;
  }
  return bytes[10] == 0xff && bytes[11] == 0xff;
}

// Written into one buffer: a scrape of a big host formats thousands of these.
std::optional<std::string> Gid::Ipv4() const {
  if (!IsIpv4Mapped()) return std::nullopt;
  std::array<char, 16> text{};  // "255.255.255.255"
  char* end = text.data();
  for (int i = 12; i < 16; ++i) {
    if (i > 12) *end++ = '.';
    end = std::to_chars(end, text.data() + text.size(), bytes[i]).ptr;
  }
  return std::string(text.data(), end);
}

std::string Gid::ToString() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(39);
  for (int i = 0; i < 16; ++i) {
    if (i > 0 && i % 2 == 0) out.push_back(':');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0x0f]);
  }
  return out;
}

std::optional<Gid> ParseGid(std::string_view text) {
  text = TrimValue(text);
  Gid gid;
  for (int group = 0; group < 8; ++group) {
    if (group > 0) {
      if (text.empty() || text.front() != ':') return std::nullopt;
      text.remove_prefix(1);
    }
    // Exactly four digits: the kernel never compresses ("::") or drops leading zeros.
    if (text.size() < 4) return std::nullopt;
    for (int i = 0; i < 4; ++i) {
      if (!IsHexDigit(text[static_cast<std::size_t>(i)])) return std::nullopt;
    }
    auto value = FromCharsExact<std::uint16_t>(text.substr(0, 4), 16);
    if (!value) return std::nullopt;
    gid.bytes[group * 2] = static_cast<unsigned char>(*value >> 8);
    gid.bytes[group * 2 + 1] = static_cast<unsigned char>(*value & 0xff);
    text.remove_prefix(4);
  }
  if (!text.empty()) return std::nullopt;
  return gid;
}

GidType ParseGidType(std::string_view text) {
  text = TrimValue(text);
  if (text == "IB/RoCE v1") return GidType::kIbRoceV1;
  if (text == "RoCE v2") return GidType::kRoceV2;
  return GidType::kUnknown;
}

const char* GidTypeLabel(GidType type) {
  switch (type) {
    case GidType::kIbRoceV1:
      return "IB/RoCE v1";
    case GidType::kRoceV2:
      return "RoCE v2";
    case GidType::kUnknown:
      break;
  }
  return "unknown";
}

}  // namespace rail::sysfs
