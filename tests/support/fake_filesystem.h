// An in-memory rail::sysfs::Filesystem for tests: files from a map, errno injection for the
// failures a fixture file cannot express (EINVAL, EACCES, EIO), optionally layered over a real
// fixture tree so a test can take a fixture as it is and break one file of it.
#pragma once

#include <algorithm>
#include <cerrno>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rail/sysfs/filesystem.h"

namespace rail::test {

class FakeFilesystem final : public sysfs::Filesystem {
 public:
  FakeFilesystem() = default;
  // Layers the fake over a fixture directory: in-memory entries win, hidden paths vanish.
  explicit FakeFilesystem(std::string fixture_root)
      : base_(std::make_unique<sysfs::RootedFilesystem>(std::move(fixture_root))) {}

  // Adds (or replaces) a file; its parent directories exist implicitly.
  FakeFilesystem& AddFile(std::string_view path, std::string contents) {
    const std::string key = Normalize(path);
    hidden_.erase(key);
    files_[key] = std::move(contents);
    return *this;
  }
  // An empty directory, which files alone cannot create.
  FakeFilesystem& AddDirectory(std::string_view path) {
    const std::string key = Normalize(path);
    hidden_.erase(key);
    directories_.insert(key);
    return *this;
  }
  // The file is listed and exists, but reading it answers `error` (as sysfs does: open succeeds,
  // read fails).
  FakeFilesystem& FailRead(std::string_view path, int error) {
    const std::string key = Normalize(path);
    hidden_.erase(key);
    read_errors_[key] = error;
    return *this;
  }
  // Listing the directory answers `error`.
  FakeFilesystem& FailList(std::string_view path, int error) {
    list_errors_[Normalize(path)] = error;
    return *this;
  }
  // Makes a path and everything below it disappear, including what the fixture holds.
  FakeFilesystem& Remove(std::string_view path) {
    hidden_.insert(Normalize(path));
    return *this;
  }

  // Every path asked about, in order, whatever the operation: lets a test prove that a
  // filtered-out device was never touched.
  const std::vector<std::string>& accessed() const { return accessed_; }
  const std::vector<std::string>& reads() const { return reads_; }
  bool WasAccessedUnder(std::string_view prefix) const {
    const std::string dir = Normalize(prefix);
    return std::any_of(accessed_.begin(), accessed_.end(), [&](const std::string& path) {
      return path == dir || path.compare(0, dir.size() + 1, dir + "/") == 0;
    });
  }

  int ReadFile(std::string_view relative_path, std::string* contents) const override {
    const std::string key = Record(relative_path);
    reads_.push_back(key);
    if (IsHidden(key)) return ENOENT;
    if (auto it = read_errors_.find(key); it != read_errors_.end()) return it->second;
    if (auto it = files_.find(key); it != files_.end()) {
      *contents = it->second;
      return 0;
    }
    if (HasLocalDirectory(key)) return EISDIR;
    return base_ ? base_->ReadFile(key, contents) : ENOENT;
  }

  int ListDirectory(std::string_view relative_path,
                    std::vector<std::string>* names) const override {
    const std::string key = Record(relative_path);
    names->clear();
    if (IsHidden(key)) return ENOENT;
    if (auto it = list_errors_.find(key); it != list_errors_.end()) return it->second;
    std::set<std::string> merged;
    bool found = false;
    if (base_) {
      std::vector<std::string> base_names;
      if (base_->ListDirectory(key, &base_names) == 0) {
        found = true;
        merged.insert(base_names.begin(), base_names.end());
      }
    }
    if (HasLocalDirectory(key)) {
      found = true;
      const std::string prefix = key.empty() ? "" : key + "/";
      auto add_children = [&](const auto& container) {
        for (const auto& entry : container) {
          const std::string& path = Key(entry);
          if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) {
            continue;
          }
          merged.insert(path.substr(prefix.size(), path.find('/', prefix.size()) - prefix.size()));
        }
      };
      add_children(files_);
      add_children(read_errors_);
      add_children(directories_);
    }
    if (!found) return ENOENT;
    for (const std::string& name : merged) {
      if (!IsHidden(key.empty() ? name : key + "/" + name)) names->push_back(name);
    }
    return 0;
  }

  bool IsDirectory(std::string_view relative_path) const override {
    const std::string key = Record(relative_path);
    if (IsHidden(key)) return false;
    if (HasLocalDirectory(key)) return true;
    if (files_.count(key) != 0 || read_errors_.count(key) != 0) return false;
    return base_ && base_->IsDirectory(key);
  }

  bool Exists(std::string_view relative_path) const override {
    const std::string key = Record(relative_path);
    if (IsHidden(key)) return false;
    if (files_.count(key) != 0 || read_errors_.count(key) != 0 || HasLocalDirectory(key)) {
      return true;
    }
    return base_ && base_->Exists(key);
  }

 private:
  static std::string Normalize(std::string_view path) {
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    return std::string(path);
  }
  static const std::string& Key(const std::string& entry) { return entry; }
  template <typename Value>
  static const std::string& Key(const std::pair<const std::string, Value>& entry) {
    return entry.first;
  }

  std::string Record(std::string_view path) const {
    std::string key = Normalize(path);
    accessed_.push_back(key);
    return key;
  }

  bool IsHidden(const std::string& key) const {
    for (const std::string& hidden : hidden_) {
      if (key == hidden || key.compare(0, hidden.size() + 1, hidden + "/") == 0) return true;
    }
    return false;
  }

  // True when an in-memory entry lies below `key` (or `key` was added as a directory).
  bool HasLocalDirectory(const std::string& key) const {
    if (key.empty()) return !files_.empty() || !read_errors_.empty() || !directories_.empty();
    if (directories_.count(key) != 0) return true;
    const std::string prefix = key + "/";
    auto below = [&](const auto& container) {
      auto it = container.lower_bound(prefix);
      return it != container.end() && Key(*it).compare(0, prefix.size(), prefix) == 0;
    };
    return below(files_) || below(read_errors_) || below(directories_);
  }

  std::unique_ptr<sysfs::RootedFilesystem> base_;
  std::map<std::string, std::string> files_;
  std::map<std::string, int> read_errors_;
  std::map<std::string, int> list_errors_;
  std::set<std::string> directories_;
  std::set<std::string> hidden_;
  mutable std::vector<std::string> accessed_;
  mutable std::vector<std::string> reads_;
};

}  // namespace rail::test
