// Filesystem access for the sysfs library. Everything is read through this interface so that
// the root is a parameter (--path.sysfs, a fixture tree) and tests can inject errors that a plain
// file cannot express (EINVAL on empty GID attributes, EACCES, EIO).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rail::sysfs {

class Filesystem {
 public:
  virtual ~Filesystem() = default;

  // Reads a whole file given relative to the root. Returns 0 or an errno value.
  virtual int ReadFile(std::string_view relative_path, std::string* contents) const = 0;

  // Lists the entries of a directory (files, directories and symlinks), sorted, without "." and
  // "..". Returns 0 or an errno value.
  virtual int ListDirectory(std::string_view relative_path,
                            std::vector<std::string>* names) const = 0;

  // True when the path exists (following symlinks) and is a directory.
  virtual bool IsDirectory(std::string_view relative_path) const = 0;

  // True when the path exists at all (following symlinks).
  virtual bool Exists(std::string_view relative_path) const = 0;
};

// Reads the real filesystem below `root` ("/sys", "/proc" or a fixture directory).
class RootedFilesystem final : public Filesystem {
 public:
  explicit RootedFilesystem(std::string root);

  int ReadFile(std::string_view relative_path, std::string* contents) const override;
  int ListDirectory(std::string_view relative_path,
                    std::vector<std::string>* names) const override;
  bool IsDirectory(std::string_view relative_path) const override;
  bool Exists(std::string_view relative_path) const override;

  const std::string& root() const { return root_; }

 private:
  std::string Resolve(std::string_view relative_path) const;
  std::string root_;
};

}  // namespace rail::sysfs
