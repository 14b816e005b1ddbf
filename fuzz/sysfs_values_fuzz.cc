// The parsers of single sysfs values (src/sysfs/values.cc), every one on the same input: the
// text of a sysfs file (rate, state, phys_state, gids/<i>, gid_attrs/types/<i>, counters/*).
//
// Invariants: a parsed GID prints back as the (trimmed, lower-cased) input and re-parses to the
// same bytes; a rate is finite and not negative; a state's name has no surrounding blanks; a
// counter is a number or "N/A", never both; decimal numbers print back as the input.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_check.h"
#include "rail/sysfs/values.h"

namespace {

using namespace rail::sysfs;

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void CheckGid(std::string_view text) {
  const std::optional<Gid> gid = ParseGid(text);
  if (!gid) return;
  const std::string printed = gid->ToString();
  FUZZ_CHECK(printed == Lower(TrimValue(text)), "a GID prints back as its sysfs spelling");
  const std::optional<Gid> again = ParseGid(printed);
  FUZZ_CHECK(again && std::memcmp(again->bytes, gid->bytes, sizeof(gid->bytes)) == 0,
             "a printed GID parses to the same bytes");
  if (const std::optional<std::string> ipv4 = gid->Ipv4()) {
    FUZZ_CHECK(printed.starts_with("0000:0000:0000:0000:0000:ffff:"), "only mapped GIDs have IPv4");
  }
  (void)gid->IsEmpty();
}

void CheckRate(std::string_view text) {
  const std::optional<PortRate> rate = ParsePortRate(text);
  if (!rate) return;
  FUZZ_CHECK(std::isfinite(rate->gigabits_per_second) && rate->gigabits_per_second >= 0,
             "a rate is finite and not negative");
  FUZZ_CHECK(std::isfinite(rate->BytesPerSecond()), "bytes per second finite");
  FUZZ_CHECK(rate->width_and_speed == TrimValue(rate->width_and_speed),
             "the width has no surrounding blanks");
}

void CheckState(std::string_view text) {
  const std::optional<NumberedState> state = ParseNumberedState(text);
  if (!state) return;
  FUZZ_CHECK(state->name == TrimValue(state->name), "a state name has no surrounding blanks");
}

void CheckNumbers(std::string_view text) {
  const std::string_view trimmed = TrimValue(text);
  FUZZ_CHECK(trimmed.empty() || (!IsBlank(trimmed.front()) && !IsBlank(trimmed.back())),
             "TrimValue leaves no blank at either end");
  const std::optional<std::uint64_t> unsigned_value = ParseUnsigned(text);
  const bool decimal =
      !trimmed.empty() && trimmed.find_first_not_of("0123456789") == std::string_view::npos;
  if (unsigned_value && decimal && (trimmed.size() == 1 || trimmed.front() != '0')) {
    FUZZ_CHECK(std::to_string(*unsigned_value) == trimmed, "a decimal prints back as itself");
  }
  if (const std::optional<std::int64_t> signed_value = ParseSigned(text)) {
    FUZZ_CHECK(trimmed.find_first_not_of("-0123456789") == std::string_view::npos,
               "a signed number is digits and a sign");
  }

  const std::optional<CounterText> counter = ParseCounterText(text);
  if (counter) {
    FUZZ_CHECK(counter->not_available != counter->value.has_value(),
               "a counter is a number or not available, never both");
    if (counter->value) {
      FUZZ_CHECK(counter->value == unsigned_value, "a counter's value is ParseUnsigned's");
      for (unsigned width : {0U, 4U, 8U, 16U, 32U, 64U, 65U})
        (void)IsSaturated(*counter->value, width);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = rail::fuzz::AsText(data, size);
  CheckGid(text);
  CheckRate(text);
  CheckState(text);
  CheckNumbers(text);
  const GidType type = ParseGidType(text);
  FUZZ_CHECK(std::strlen(GidTypeLabel(type)) > 0, "every GID type has a label");
  return 0;
}
