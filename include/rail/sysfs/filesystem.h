// Filesystem access for the sysfs library. Everything is read through this interface so that
// the root is a parameter (--path.sysfs, a fixture tree) and tests can inject errors that a plain
// file cannot express (EINVAL on empty GID attributes, EACCES, EIO).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
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

  // Lists an attribute group: a directory whose entries the kernel creates with it and never
  // changes while it lives (a port's counters/ and hw_counters/, a netdev's statistics/), so an
  // earlier listing may answer for as long as the path leads to the same directory. Otherwise
  // as ListDirectory, which is the default.
  virtual int ListAttributeGroup(std::string_view relative_path,
                                 std::vector<std::string>* names) const;

  // True when the path exists (following symlinks) and is a directory.
  virtual bool IsDirectory(std::string_view relative_path) const = 0;

  // True when the path exists at all (following symlinks).
  virtual bool Exists(std::string_view relative_path) const = 0;

  // Where the path resolves with every symlink followed, relative to the root
  // ("bus/pci/devices/0000:01:00.0" -> "devices/pci0000:00/0000:00:01.0/0000:01:00.0"). Returns 0
  // or an errno value; EXDEV when it resolves outside the root. Filesystems without links (test
  // fakes) keep the default: ENOSYS.
  virtual int ResolvePath(std::string_view relative_path, std::string* resolved) const;

  // The last component of what the symlink at `relative_path` points to, from readlink(2) of
  // that link alone ("class/net/eth0/device/driver" -> "mlx5_core"). Returns 0 or an errno
  // value; EINVAL when the path is not a link or its target ends in "." or "..". Filesystems
  // without links keep the default: ENOSYS.
  virtual int LinkTargetName(std::string_view relative_path, std::string* name) const;
};

// Reads the real filesystem below `root` ("/sys", "/proc" or a fixture directory).
//
// By default the files read are kept open between calls and re-read with pread(2) at offset 0:
// on /sys that is ~1 us instead of ~18 us for open+read+close, most of which is resolving the
// path from the root (see filesystem.cc for what keeps the answers fresh and what it costs).
class RootedFilesystem final : public Filesystem {
 public:
  struct Options {
    // Keep file descriptors of files read open between calls.
    bool cache_open_files = true;
    // Bound on cached descriptors; also at most half the RLIMIT_NOFILE soft limit at
    // construction time. Each cached sysfs file also pins ~4.5 KiB of kernel memory.
    std::size_t max_cached_files = 8192;
    // How long a cached file is trusted to still belong to the directory it was opened in
    // (a renamed device, a netdev name reused by another device) before that directory is
    // looked up again.
    std::chrono::milliseconds directory_check_interval{1000};
  };

  explicit RootedFilesystem(std::string root);
  RootedFilesystem(std::string root, const Options& options);
  ~RootedFilesystem() override;
  RootedFilesystem(const RootedFilesystem&) = delete;
  RootedFilesystem& operator=(const RootedFilesystem&) = delete;

  int ReadFile(std::string_view relative_path, std::string* contents) const override;
  int ListDirectory(std::string_view relative_path, std::vector<std::string>* names) const override;
  // The listing is kept with the directory's cached descriptor and dropped with it: when the
  // directory check finds the path leading to another directory (a device re-created).
  int ListAttributeGroup(std::string_view relative_path,
                         std::vector<std::string>* names) const override;
  bool IsDirectory(std::string_view relative_path) const override;
  bool Exists(std::string_view relative_path) const override;
  int ResolvePath(std::string_view relative_path, std::string* resolved) const override;
  int LinkTargetName(std::string_view relative_path, std::string* name) const override;

  const std::string& root() const { return root_; }
  // Descriptors currently held open by the cache (for tests and self-metrics).
  std::size_t cached_files() const;

 private:
  class FileCache;

  template <typename ReadFn>
  bool ReadCached(std::string_view key, bool directory, ReadFn read) const;
  std::optional<int> ReadInKeptDirectory(std::string_view key, std::string* contents) const;
  std::string Resolve(std::string_view relative_path) const;
  std::string root_;
  std::string real_root_;  // root_ resolved, with a trailing '/'; "" if it did not resolve
  std::unique_ptr<FileCache> cache_;  // null when caching is off
};

}  // namespace rail::sysfs
