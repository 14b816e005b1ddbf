// The shared secret that peers prove they know (auth.h). It lives in a file readable by the agent
// only, like an ssh private key.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace rail::peer {

// Largest secret file accepted: a secret is a line of random characters, and refusing large files
// keeps a mistaken path (a log, a binary) from being read whole.
inline constexpr std::size_t kMaxSecretFileBytes = 4096;

// Holds the secret's bytes and wipes them when destroyed. Neither copyable nor movable, so that no
// stray copy outlives it; share it as std::shared_ptr<const Secret>.
class Secret {
 public:
  explicit Secret(std::string_view bytes);
  ~Secret();
  Secret(const Secret&) = delete;
  Secret& operator=(const Secret&) = delete;

  std::string_view bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// Reads the secret from `path`. Refuses (nullptr, `error` set) a file that cannot be read, is not
// a regular file, is larger than kMaxSecretFileBytes, grants any permission to group or others
// (the secret would not be secret), or is empty once one trailing newline ("\n" or "\r\n") has
// been stripped. Only that one newline is stripped: `echo secret > file` must give "secret", but
// any other byte is part of the secret.
std::shared_ptr<const Secret> LoadSecretFile(const std::string& path, std::string* error);

// Whether two secrets hold the same bytes, compared in constant time (a reload compares the file
// it re-read with the running secret).
bool SameSecret(const Secret& a, const Secret& b);

}  // namespace rail::peer
