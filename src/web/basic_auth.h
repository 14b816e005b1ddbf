// HTTP basic authentication against bcrypt hashes, checked with the system's crypt_r(3)
// (libxcrypt): this file never hashes a password itself.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace rail::web::detail {

// nullopt-like: "" when `hash` is a bcrypt hash crypt(3) accepts, else why not.
std::string BcryptHashProblem(const std::string& hash);

// Decodes the credentials of an "Authorization: Basic <base64(user:password)>" header. false for
// another scheme or text that is not base64 of "user:password".
bool ParseBasicAuthorization(std::string_view header, std::string* user, std::string* password);

enum class AuthResult { kOk, kMissing, kMalformed, kInvalid };

class BasicAuthChecker {
 public:
  // `users` maps user names to bcrypt hashes already checked by BcryptHashProblem.
  explicit BasicAuthChecker(std::map<std::string, std::string> users);

  // `authorization` is the request's Authorization header (nullptr: none). `user` receives the
  // claimed user name, for the log. Thread-safe.
  AuthResult Check(const char* authorization, std::string* user) const;

 private:
  bool Verify(const std::string& user, const std::string& password) const;
  std::string CacheKey(const std::string& user, const std::string& password) const;

  const std::map<std::string, std::string> users_;
  // bcrypt costs tens of milliseconds by design; a scrape every few seconds with the same
  // credentials would pay it every time. Credentials that verified once are remembered by an
  // HMAC under a key that lives only in this process, never in clear.
  std::string cache_key_;
  mutable std::mutex cache_mutex_;
  mutable std::set<std::string> verified_;
};

}  // namespace rail::web::detail
