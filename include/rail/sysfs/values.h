// Parsers for single sysfs/procfs values. Pure functions on text: no filesystem, no Prometheus.
// Every kernel quirk of the formats lives here and is unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rail::sysfs {

// Removes one trailing newline and surrounding blanks: sysfs values end with "\n", fixtures and
// some drivers omit it.
std::string_view TrimValue(std::string_view text);

// Decimal or 0x-prefixed hexadecimal unsigned integer ("1234\n", "0x0").
std::optional<std::uint64_t> ParseUnsigned(std::string_view text);

// Signed decimal integer (netdev `speed` is -1 when the link is down).
std::optional<std::int64_t> ParseSigned(std::string_view text);

// `state` and `phys_state`: "4: ACTIVE", "5: LinkUp".
struct NumberedState {
  std::uint32_t id = 0;
  std::string name;
};
std::optional<NumberedState> ParseNumberedState(std::string_view text);

// `rate`: "100 Gb/sec (2X HDR)", "2.5 Gb/sec (1X SDR)", "400 Gb/sec (4X NDR)", "10 Gb/sec".
struct PortRate {
  double gigabits_per_second = 0;  // as printed
  std::string width_and_speed;     // "2X HDR", empty when the kernel prints no parenthesis
  std::string width;               // its first word, the lanes: "2X"
  std::string speed;               // the rest, the rate class of a lane: "HDR"; may be empty
  double BytesPerSecond() const { return gigabits_per_second * 1e9 / 8; }
};
std::optional<PortRate> ParsePortRate(std::string_view text);

// A counter file: a number, or "N/A (no PMA)" when the port has no performance management agent.
struct CounterText {
  std::optional<std::uint64_t> value;  // empty when not available
  bool not_available = false;          // "N/A (no PMA)"
};
std::optional<CounterText> ParseCounterText(std::string_view text);

// A PMA counter of `width_bits` bits pegs at its maximum instead of wrapping.
bool IsSaturated(std::uint64_t value, unsigned width_bits);

// `gids/<i>`: "fe80:0000:0000:0000:32c5:99ff:fe3e:6a10" (eight groups of four hex digits).
struct Gid {
  unsigned char bytes[16] = {};
  bool IsEmpty() const;                     // all-zero GIDs are unused table slots
  bool IsIpv4Mapped() const;                // ::ffff:a.b.c.d
  std::optional<std::string> Ipv4() const;  // an IPv4-mapped GID's address as "a.b.c.d"
  std::string ToString() const;             // canonical sysfs spelling, lower case
};
std::optional<Gid> ParseGid(std::string_view text);

// `gid_attrs/types/<i>`: "IB/RoCE v1" or "RoCE v2".
enum class GidType { kIbRoceV1, kRoceV2, kUnknown };
GidType ParseGidType(std::string_view text);
const char* GidTypeLabel(GidType type);  // "IB/RoCE v1", "RoCE v2", "unknown"

}  // namespace rail::sysfs
