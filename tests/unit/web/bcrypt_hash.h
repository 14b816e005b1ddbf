#pragma once
#include <crypt.h>

#include <string>

namespace rail::testing {

// A bcrypt hash of `password` made by libxcrypt itself (cost 4: fast, still bcrypt).
inline std::string Bcrypt(const std::string& password) {
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", 4, nullptr, 0, setting, sizeof(setting)) == nullptr) return {};
  crypt_data data{};
  const char* hash = crypt_r(password.c_str(), setting, &data);
  return hash == nullptr ? std::string() : std::string(hash);
}

}  // namespace rail::testing
