// The cache of open descriptors behind RootedFilesystem. Internal to the sysfs layer: only
// filesystem.cc includes it.
//
// Why files are kept open, and what keeps the answers right.
//
// A scrape of a large host reads ~4,000 files. open()+read()+close() of a sysfs attribute costs
// ~18 us, nearly all of it walking the path from the root; pread(fd, buf, n, 0) on a descriptor
// kept open costs ~1.2 us and returns a fresh value, because kernfs runs the attribute's show()
// again for every read at offset 0 (seq_file restarts at offset 0), and so does procfs. So the
// descriptors of files read successfully are kept, keyed by their path relative to the root,
// and re-read at offset 0. What a kept descriptor can no longer tell, and how it is caught:
//  * The device went away: kernfs answers ENODEV (procfs EIO) on the old descriptor. Any read
//    error on a cached descriptor drops it and the path is opened again, once: a recreated
//    device is read correctly, a vanished file answers ENOENT as before, and an error that
//    persists (EINVAL of a down link's carrier) is returned as before.
//  * The path leads to another file although the old one lives on: a netdev or RDMA device
//    renamed and its old name reused by another device; a fixture file deleted, or replaced by
//    rename(), which leaves the old inode readable. Checking every read would cost an fstat()
//    (no help against renames) or a path walk (the cost the cache is there to avoid), so the
//    check is per directory: each cached file remembers the identity (st_dev, st_ino, st_ctim)
//    of the directory its path led to, and that path is stat()ed again at most once per
//    directory_check_interval (default 1 s). Creating, deleting or renaming an entry changes
//    the directory's ctime; a new identity drops every file opened under the old one. So
//    with scrapes further apart than the interval every scrape reads what the paths name now,
//    for one stat() per directory instead of one path walk per file; scrapes closer together
//    can read a renamed device or a replaced fixture file for up to the interval. A directory
//    changed less than a second ago is not trusted at all (its next change could carry the
//    same coarse timestamp): files in it are opened afresh on every read until it settles.
//    A file rewritten in place needs none of this: a read at offset 0 sees the new contents.
//    kernfs keeps no directory timestamps, so on /sys only the inode number tells; a kernfs
//    inode number is not reused, so a recreated device directory is always a new identity.
// A file that open() found missing (mlx5 ports have no counters_ext/, older kernels no
// carrier_up_count) is remembered as missing in its directory's entry, when that directory holds
// cached files: a scrape asks for the same missing files every time, and each would cost a path
// walk to fail again. The same rule as for a kept descriptor applies: the answer stands while the
// directory is settled and its looks (at most one interval apart) find it unchanged, and for at
// most one interval in any case, so a file created in it since is read at the latest one interval
// later (on /sys, where a new file leaves the directory's identity as it was, exactly that).
// Listed directories are kept open the same way (a listing from offset 0 is the directory as it
// is now), and IsDirectory()/Exists() of a directory looked at within the interval need no
// stat(). An attribute group (ListAttributeGroup: counters/, hw_counters/, statistics/, whose
// entries the kernel creates with the directory and never changes) is listed once and its names
// kept with its descriptor, which goes when the path leads elsewhere (a re-created device is a
// new kernfs directory). Every other read is unchanged: every file that exists and every other
// listing asked for is read every time. Costs: the cached descriptors count against
// RLIMIT_NOFILE (the cache takes at most half the soft limit, and gives everything back when an
// open() fails with EMFILE), they show up in
// process_open_fds, and each read sysfs file pins its seq_file page in the kernel: ~4.5 KiB of
// unreclaimable slab per cached file, ~16 MiB for the 16-device bench tree. Files that fail to
// read are never cached, so they cost a full open every time, as before.
#pragma once

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rail/sysfs/filesystem.h"
#include "sysfs/file_io.h"

namespace rail::sysfs {

// The cache of open descriptors, least recently used out first. A file being read is marked
// leased and the lock released during the read, which can be slow (mlx5 hw_counters ask the
// firmware): a leased file is never evicted or closed, and another thread wanting the same
// file meanwhile opens its own.
class RootedFilesystem::FileCache {
 public:
  // A directory that cached files were opened in (or a cached directory itself), as its path
  // led to it.
  // A name open() found missing in a directory, and when.
  struct Absent {
    std::string name;
    std::uint64_t generation = 0;  // the directory's generation then
    std::int64_t noted_ns = 0;
  };
  struct Directory {
    std::string path;  // relative to the root
    detail::DirectoryId id;
    bool settled = false;
    std::int64_t checked_ns = 0;
    std::uint64_t generation = 0;  // bumped whenever the path leads to something else
    std::size_t files = 0;         // cached files opened in it; it goes with the last one
    std::vector<Absent> absent;    // at most kMaxAbsentNames
  };
  // Bounds what a directory remembers as missing: a scrape asks for a handful per directory.
  static constexpr std::size_t kMaxAbsentNames = 32;
  struct File {
    base::UniqueFd fd;
    detail::FileKind kind = detail::FileKind::kOther;
    Directory* directory = nullptr;
    std::uint64_t generation = 0;  // the directory's generation when opened
    std::uint64_t last_used = 0;
    std::atomic<bool> leased{false};
    std::string_view path;  // the map's key
    // A directory listed by ListAttributeGroup: its sorted names, written under the lease.
    std::optional<std::vector<std::string>> listing;
    // A directory files are opened in (ReadInKeptDirectory): whether it is on sysfs, so that one
    // read is each file's whole value; asked once, under the lease.
    std::optional<bool> on_sysfs;
    // The file looked up after this one last time, valid while successor_epoch == epoch_: a
    // scrape asks for the same paths in the same order, and following the chain touches less
    // memory than hashing a path and walking a bucket, which is most of what a lookup costs
    // when the scrape's parsing has pushed the table out of the CPU caches.
    File* successor = nullptr;
    std::uint64_t successor_epoch = 0;
  };
  enum class Verdict {
    kMiss,            // nothing cached (or another thread is reading it)
    kCurrent,         // leased, and its directory vouches for it
    kCheckDirectory,  // leased, but the directory is due for a look (StillCurrent)
    kStale,           // leased, and the path leads elsewhere now: drop it
  };
  struct Lease {
    File* file = nullptr;
  };

  FileCache(std::string root, std::size_t capacity, std::chrono::milliseconds check_interval)
      : root_(std::move(root)),
        capacity_(capacity),
        check_interval_ns_(
            std::chrono::duration_cast<std::chrono::nanoseconds>(check_interval).count()) {}

  Verdict CheckOut(std::string_view path, Lease* lease) {
    const std::int64_t now = detail::CoarseNowNs();
    std::lock_guard lock(mutex_);
    File* file = nullptr;
    if (previous_ != nullptr && previous_->successor_epoch == epoch_ &&
        previous_->successor != nullptr && previous_->successor->path == path) {
      file = previous_->successor;
    } else {
      const auto it = files_.find(path);
      if (it != files_.end()) file = &it->second;
      if (previous_ != nullptr) {
        previous_->successor = file;
        previous_->successor_epoch = epoch_;
      }
    }
    previous_ = file;
    if (file == nullptr || file->leased.load(std::memory_order_acquire)) return Verdict::kMiss;
    file->leased.store(true, std::memory_order_relaxed);
    file->last_used = ++uses_;
    lease->file = file;
    Directory& directory = *file->directory;
    if (!directory.settled || now - directory.checked_ns >= check_interval_ns_) {
      directory.checked_ns = now;  // one reader looks, the others trust the last look
      return Verdict::kCheckDirectory;
    }
    return file->generation == directory.generation ? Verdict::kCurrent : Verdict::kStale;
  }

  // Looks at the leased file's directory again: whether its path still leads where it did.
  bool StillCurrent(const Lease& lease) {
    const detail::DirectoryLook look = detail::LookAtDirectory(root_, lease.file->directory->path);
    std::lock_guard lock(mutex_);
    Directory& directory = *lease.file->directory;
    Update(directory, look, detail::CoarseNowNs());
    return directory.settled && lease.file->generation == directory.generation;
  }

  // True when `path` is a directory of the cache, looked at less than an interval ago and
  // present then: IsDirectory() and Exists() need no path walk for it.
  bool VouchesForDirectory(std::string_view path) const {
    const std::int64_t now = detail::CoarseNowNs();
    std::lock_guard lock(mutex_);
    const auto it = directories_.find(path);
    if (it == directories_.end()) return false;
    const Directory& directory = it->second;
    return directory.settled && directory.id.present &&
           now - directory.checked_ns < check_interval_ns_;
  }

  // True when open(`path`) found nothing less than an interval ago, and `path`'s directory has
  // been looked at within the interval and found unchanged since (see the comment above).
  bool KnownAbsent(std::string_view path) const {
    const std::int64_t now = detail::CoarseNowNs();
    std::lock_guard lock(mutex_);
    const auto it = directories_.find(detail::ParentOf(path));
    if (it == directories_.end()) return false;
    const Directory& directory = it->second;
    if (!directory.settled || now - directory.checked_ns >= check_interval_ns_) return false;
    const std::string_view name = NameOf(path);
    for (const Absent& absent : directory.absent) {
      if (absent.name == name) {
        return absent.generation == directory.generation &&
               now - absent.noted_ns < check_interval_ns_;
      }
    }
    return false;
  }

  // open(`path`) answered ENOENT: remembered when its directory is one of the cache's.
  void NoteAbsent(std::string_view path) {
    const std::int64_t now = detail::CoarseNowNs();
    std::lock_guard lock(mutex_);
    const auto it = directories_.find(detail::ParentOf(path));
    if (it == directories_.end() || !it->second.settled) return;
    Directory& directory = it->second;
    const std::string_view name = NameOf(path);
    for (Absent& absent : directory.absent) {
      if (absent.name == name) {
        absent.generation = directory.generation;
        absent.noted_ns = now;
        return;
      }
    }
    if (directory.absent.size() < kMaxAbsentNames) {
      directory.absent.push_back({std::string(name), directory.generation, now});
    }
  }

  // A stat() of `path` made anyway (IsDirectory, Exists) counts as the directory's next look.
  void Observed(std::string_view path, const struct stat* st) {
    const detail::DirectoryLook look = detail::DescribeDirectory(st);
    std::lock_guard lock(mutex_);
    const auto it = directories_.find(path);
    if (it != directories_.end()) Update(it->second, look, detail::CoarseNowNs());
  }

  void PutBack(const Lease& lease) { lease.file->leased.store(false, std::memory_order_release); }

  void Drop(const Lease& lease) {
    std::lock_guard lock(mutex_);
    Erase(files_.find(lease.file->path));
  }

  void Insert(std::string_view path, base::UniqueFd fd, detail::FileKind kind) {
    std::lock_guard lock(mutex_);
    if (files_.find(path) != files_.end()) return;  // another thread's is there already
    if (files_.size() >= capacity_) EvictOldest(capacity_ / 8 + 1);
    if (files_.size() >= capacity_) return;  // all leased
    // A cached directory answers for itself: its own path is what must still lead to it.
    Directory& directory =
        AcquireDirectory(kind == detail::FileKind::kDirectory ? path : detail::ParentOf(path));
    const auto [it, inserted] = files_.try_emplace(std::string(path));
    File& file = it->second;
    file.fd = std::move(fd);
    file.kind = kind;
    file.directory = &directory;
    file.generation = directory.generation;
    file.last_used = ++uses_;
    file.path = it->first;
  }

  // Gives every idle descriptor back (the process ran out of them).
  void Clear() {
    std::lock_guard lock(mutex_);
    EvictOldest(files_.size());
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return files_.size();
  }

 private:
  using Files = std::unordered_map<std::string, File, detail::PathHash, std::equal_to<>>;

  static std::string_view NameOf(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
  }

  // Under mutex_. A new directory is looked at now, just after a file in it was opened.
  Directory& AcquireDirectory(std::string_view path) {
    auto it = directories_.find(path);
    if (it == directories_.end()) {
      const detail::DirectoryLook look = detail::LookAtDirectory(root_, path);
      Directory directory;
      directory.path = std::string(path);
      directory.id = look.id;
      directory.settled = look.settled;
      directory.checked_ns = detail::CoarseNowNs();
      it = directories_.emplace(directory.path, std::move(directory)).first;
    }
    ++it->second.files;
    return it->second;
  }

  // Under mutex_.
  static void Update(Directory& directory, const detail::DirectoryLook& look, std::int64_t now) {
    if (!(look.id == directory.id)) {
      directory.id = look.id;
      ++directory.generation;
    }
    directory.settled = look.settled;
    directory.checked_ns = now;
  }

  // Under mutex_.
  void Erase(Files::iterator it) {
    Directory& directory = *it->second.directory;
    files_.erase(it);  // closes the descriptor
    ++epoch_;          // forgets every successor, one of which may have been this file
    previous_ = nullptr;
    if (--directory.files == 0) directories_.erase(directories_.find(directory.path));
  }

  // Under mutex_. Evicts up to `count` idle files, least recently used first, in one pass over
  // the cache: done only when it is full, so the pass costs ~8 per insertion, and no list has
  // to be reordered on every read.
  void EvictOldest(std::size_t count) {
    std::vector<std::pair<std::uint64_t, Files::iterator>> idle;
    idle.reserve(files_.size());
    for (auto it = files_.begin(); it != files_.end(); ++it) {
      if (!it->second.leased.load(std::memory_order_acquire)) {
        idle.emplace_back(it->second.last_used, it);
      }
    }
    count = std::min(count, idle.size());
    const auto by_use = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::nth_element(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(count), idle.end(),
                     by_use);
    for (std::size_t i = 0; i < count; ++i) Erase(idle[i].second);
  }

  const std::string root_;
  const std::size_t capacity_;
  const std::int64_t check_interval_ns_;
  mutable std::mutex mutex_;
  std::uint64_t uses_ = 0;
  std::uint64_t epoch_ = 1;
  File* previous_ = nullptr;
  Files files_;
  std::unordered_map<std::string, Directory, detail::PathHash, std::equal_to<>> directories_;
};

}  // namespace rail::sysfs
