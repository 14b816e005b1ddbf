#include "basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cctype>
#include <memory>
#include <stdexcept>

namespace rail::web::detail {
namespace {

// Bounds the cache: a client that authenticates with ever new passwords cannot grow it.
constexpr std::size_t kMaxVerifiedCredentials = 256;

// crypt_r with its state on the heap: struct crypt_data is tens of KiB, too much for a stack.
std::string Crypt(const std::string& phrase, const std::string& setting) {
  auto data = std::make_unique<crypt_data>();  // value-initialised: `initialized` is 0
  const char* hashed = crypt_r(phrase.c_str(), setting.c_str(), data.get());
  // libxcrypt answers an unusable setting with a string starting with '*', never a hash.
  if (hashed == nullptr || hashed[0] == '*') return {};
  return hashed;
}

bool EqualConstantTime(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::string BcryptHashProblem(const std::string& hash) {
  if (hash.rfind("$2a$", 0) != 0 && hash.rfind("$2b$", 0) != 0 && hash.rfind("$2y$", 0) != 0) {
    return "not a bcrypt hash (expected $2a$, $2b$ or $2y$, e.g. from htpasswd -nBC 10)";
  }
  // $2b$, two digits of cost, '$', then 22 characters of salt and 31 of hash.
  constexpr std::size_t kLength = 60;
  constexpr std::size_t kSaltAt = 7;
  constexpr std::size_t kSaltLength = 22;
  constexpr const char* kAlphabet =
      "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  if (hash.size() != kLength || hash[6] != '$' ||
      !std::isdigit(static_cast<unsigned char>(hash[4])) ||
      !std::isdigit(static_cast<unsigned char>(hash[5])) ||
      hash.find_first_not_of(kAlphabet, kSaltAt) != std::string::npos) {
    return "malformed bcrypt hash (expected $2b$<cost>$ and 53 characters of salt and hash)";
  }
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4 || cost > 31) {
    return "malformed bcrypt hash (cost " + hash.substr(4, 2) + ", bcrypt's is 04 to 31)";
  }
  // crypt(3) judges the salt at the lowest cost: at the hash's own it would take as long as a
  // login, at every start and reload (cost 20: about a minute).
  const std::string lowest = hash.substr(0, 4) + "04$" + hash.substr(kSaltAt, kSaltLength);
  if (Crypt("rail_exporter", lowest).size() != kLength) {
    return "malformed bcrypt hash (crypt(3) does not accept its salt)";
  }
  return {};
}

bool ParseBasicAuthorization(std::string_view header, std::string* user, std::string* password) {
  constexpr std::string_view kScheme = "Basic ";
  if (header.size() <= kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    // The scheme name is case-insensitive (RFC 9110).
    if (std::tolower(static_cast<unsigned char>(header[i])) !=
        std::tolower(static_cast<unsigned char>(kScheme[i]))) {
      return false;
    }
  }
  std::string_view encoded = header.substr(kScheme.size());
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  while (!encoded.empty() && encoded.back() == ' ') encoded.remove_suffix(1);
  if (encoded.empty() || encoded.size() > 4096) return false;

  const std::unique_ptr<EVP_ENCODE_CTX, decltype(&EVP_ENCODE_CTX_free)> context(
      EVP_ENCODE_CTX_new(), EVP_ENCODE_CTX_free);
  if (!context) return false;
  std::string decoded(encoded.size(), '\0');
  int length = 0;
  int tail = 0;
  EVP_DecodeInit(context.get());
  if (EVP_DecodeUpdate(context.get(), reinterpret_cast<unsigned char*>(decoded.data()), &length,
                       reinterpret_cast<const unsigned char*>(encoded.data()),
                       static_cast<int>(encoded.size())) < 0 ||
      EVP_DecodeFinal(context.get(), reinterpret_cast<unsigned char*>(decoded.data()) + length,
                      &tail) != 1) {
    return false;
  }
  decoded.resize(static_cast<std::size_t>(length + tail));
  const auto colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  *user = decoded.substr(0, colon);
  *password = decoded.substr(colon + 1);
  return true;
}

BasicAuthChecker::BasicAuthChecker(std::map<std::string, std::string> users)
    : users_(std::move(users)), cache_key_(32, '\0') {
  if (RAND_bytes(reinterpret_cast<unsigned char*>(cache_key_.data()),
                 static_cast<int>(cache_key_.size())) != 1) {
    throw std::runtime_error("basic_auth_users: no random bytes for the credential cache");
  }
}

std::string BasicAuthChecker::CacheKey(const std::string& user, const std::string& password) const {
  // Length-prefixed, so that ("ab", "c") and ("a", "bc") differ.
  const std::string message = std::to_string(user.size()) + ":" + user + password;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_length = 0;
  if (HMAC(EVP_sha256(), cache_key_.data(), static_cast<int>(cache_key_.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest,
           &digest_length) == nullptr) {
    return {};
  }
  return std::string(reinterpret_cast<const char*>(digest), digest_length);
}

bool BasicAuthChecker::Verify(const std::string& user, const std::string& password) const {
  const auto entry = users_.find(user);
  if (entry == users_.end()) {
    // Spend the same bcrypt time on an unknown user, so that timing does not tell which user
    // names exist.
    if (!users_.empty()) Crypt(password, users_.begin()->second);
    return false;
  }
  const std::string key = CacheKey(user, password);
  if (!key.empty()) {
    const std::lock_guard lock(cache_mutex_);
    if (verified_.contains(key)) return true;
  }
  if (!EqualConstantTime(Crypt(password, entry->second), entry->second)) return false;
  if (!key.empty()) {
    const std::lock_guard lock(cache_mutex_);
    if (verified_.size() >= kMaxVerifiedCredentials) verified_.clear();
    verified_.insert(key);
  }
  return true;
}

AuthResult BasicAuthChecker::Check(const char* authorization, std::string* user) const {
  if (authorization == nullptr || authorization[0] == '\0') return AuthResult::kMissing;
  std::string password;
  if (!ParseBasicAuthorization(authorization, user, &password)) return AuthResult::kMalformed;
  return Verify(*user, password) ? AuthResult::kOk : AuthResult::kInvalid;
}

}  // namespace rail::web::detail
