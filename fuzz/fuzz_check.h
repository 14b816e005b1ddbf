// What every fuzz target shares: an invariant that fails is a crash libFuzzer records, with the
// message saying which invariant, so that a finding reads as a bug report.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(condition, what)                                                           \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "fuzz invariant violated at %s:%d: %s (%s)\n", __FILE__, __LINE__, \
                   what, #condition);                                                         \
      std::abort();                                                                           \
    }                                                                                         \
  } while (false)

namespace rail::fuzz {

inline std::string_view AsText(const unsigned char* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace rail::fuzz
