#include "rail/peer/secret.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "rail/base/unique_fd.h"
#include "shared_helpers.h"

namespace rail::peer {

namespace {

// Wipes a buffer that held secret bytes when it goes out of scope, on every return path.
class ScopedCleanse {
 public:
  explicit ScopedCleanse(std::string* buffer) : buffer_(buffer) {}
  ~ScopedCleanse() {
    if (!buffer_->empty()) OPENSSL_cleanse(buffer_->data(), buffer_->size());
  }
  ScopedCleanse(const ScopedCleanse&) = delete;
  ScopedCleanse& operator=(const ScopedCleanse&) = delete;

 private:
  std::string* buffer_;
};

using detail::ErrnoText;

// Others never, and the group only to read, and only where another user (root, kubelet) owns the
// file and grants it to the agent's own group: how the package and a Kubernetes Secret with
// fsGroup hand the secret to an agent that is not root.
bool OnlyOwnerOrOwnGroupMayRead(const struct stat& status) {
  if ((status.st_mode & S_IRWXO) != 0) return false;
  if ((status.st_mode & S_IRWXG) == 0) return true;
  const bool granted_to_own_group = status.st_uid != ::geteuid() && status.st_gid == ::getegid();
  return granted_to_own_group && (status.st_mode & S_IRWXG) == S_IRGRP;
}

std::string OctalMode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

Secret::Secret(std::string_view bytes) : bytes_(bytes) {}

Secret::~Secret() {
  OPENSSL_cleanse(bytes_.data(), bytes_.size());
}

std::shared_ptr<const Secret> LoadSecretFile(const std::string& path, std::string* error) {
  const std::string what = "secret file " + path;
  // The checks are made on the opened descriptor, so the file cannot be swapped between the
  // check and the read.
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    *error = what + ": cannot open: " + ErrnoText(errno);
    return nullptr;
  }
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) {
    *error = what + ": cannot stat: " + ErrnoText(errno);
    return nullptr;
  }
  if (!S_ISREG(status.st_mode)) {
    *error = what + ": not a regular file";
    return nullptr;
  }
  if (!OnlyOwnerOrOwnGroupMayRead(status)) {
    *error = what + " has mode " + OctalMode(status.st_mode) +
             ", which lets group or others access it; restrict it with: chmod 600 " + path;
    return nullptr;
  }
  if (status.st_size > static_cast<off_t>(kMaxSecretFileBytes)) {
    *error = what + " is " + std::to_string(status.st_size) + " bytes; a secret is at most " +
             std::to_string(kMaxSecretFileBytes) + " bytes";
    return nullptr;
  }

  std::string contents(kMaxSecretFileBytes + 1, '\0');
  ScopedCleanse cleanse(&contents);
  std::size_t length = 0;
  while (length < contents.size()) {
    const ssize_t got = ::read(fd.get(), contents.data() + length, contents.size() - length);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      *error = what + ": cannot read: " + ErrnoText(errno);
      return nullptr;
    }
    if (got == 0) break;
    length += static_cast<std::size_t>(got);
  }
  if (length > kMaxSecretFileBytes) {  // grew after fstat
    *error = what + " is larger than " + std::to_string(kMaxSecretFileBytes) + " bytes";
    return nullptr;
  }

  std::string_view secret(contents.data(), length);
  if (secret.ends_with("\r\n")) {
    secret.remove_suffix(2);
  } else if (secret.ends_with('\n')) {
    secret.remove_suffix(1);
  }
  if (secret.empty()) {
    *error = what + " is empty; put a random secret in it, e.g. openssl rand -hex 32 > " + path;
    return nullptr;
  }
  return std::make_shared<const Secret>(secret);
}

bool SameSecret(const Secret& a, const Secret& b) {
  return a.bytes().size() == b.bytes().size() &&
         CRYPTO_memcmp(a.bytes().data(), b.bytes().data(), a.bytes().size()) == 0;
}

}  // namespace rail::peer
