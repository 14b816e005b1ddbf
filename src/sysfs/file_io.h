// Low-level file access of RootedFilesystem: descriptors, reads that know what a short read
// means, directory identities for the descriptor cache. Internal to the sysfs layer.
#pragma once

#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rail/base/unique_fd.h"

namespace rail::sysfs::detail {

// What a read of the file means, decided once per open.
enum class FileKind : std::uint8_t {
  kSysfs,      // a kernfs attribute: one show() per read, so a short read is the whole value
  kRegular,    // a plain file (fixture trees): a short read is the end of the file too
  kProcfs,     // seq_file records: a short read is not the end, only a read of 0 is
  kOther,      // anything else: read to the end, never cached
  kDirectory,  // listed with getdents64() from offset 0, which lists it as it is now
};

// What a directory path leads to.
struct DirectoryId {
  dev_t dev = 0;
  ino_t ino = 0;
  timespec ctime{};
  bool present = false;

  bool operator==(const DirectoryId& other) const {
    return dev == other.dev && ino == other.ino && ctime.tv_sec == other.ctime.tv_sec &&
           ctime.tv_nsec == other.ctime.tv_nsec && present == other.present;
  }
};

struct DirectoryLook {
  DirectoryId id;
  bool settled = false;  // changed more than a second ago
};

struct PathHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view path) const {
    return std::hash<std::string_view>{}(path);
  }
};

std::string_view StripSlashes(std::string_view path);

std::string_view ParentOf(std::string_view relative);

// Builds root/relative into a caller buffer: no heap allocation per path on the read path.
// False when the path does not fit.
bool BuildPath(const std::string& root, std::string_view relative, char (&out)[PATH_MAX]);

// Returns 0 or an errno value.
int OpenReadOnly(const char* path, int flags, base::UniqueFd* out);

FileKind Classify(int fd);

// Appends the file from `offset` on, up to its end as `kind` tells it. Returns 0 or an errno
// value, with `contents` cleared; errors such as EINVAL arrive here, not at open(). sysfs
// reports st_size 4096 whatever an attribute holds, so no fstat(): for sysfs one pread() is the
// whole value unless it filled the buffer.
int ReadFrom(int fd, FileKind kind, off_t offset, std::string* contents);

int ReadAll(int fd, FileKind kind, std::string* contents);

// Lists a directory from its start, without "." and "..". Returns 0 or an errno value
// (ENOENT for a directory deleted since it was opened). getdents64() into a buffer on the
// stack rather than opendir(), which allocates 32 KiB per directory.
int ReadNames(int fd, std::vector<std::string>* names);

// `st` is null when the path leads nowhere.
DirectoryLook DescribeDirectory(const struct stat* st);

DirectoryLook LookAtDirectory(const std::string& root, std::string_view relative);

std::int64_t CoarseNowNs();

std::size_t CacheCapacity(std::size_t wanted);

// GID tables (gids/, gid_attrs/types/, gid_attrs/ndevs/: 3 files per slot, 128 to 255 slots per
// port) are read once per GID refresh (30 s), not every scrape. Caching them would take more
// descriptors than all the per-scrape counters together, pin ~4.5 KiB of kernel memory per
// slot file, and push the counters out of the cache at every refresh. Their directories are
// kept like every directory (a directory's descriptor pins no page), and the slot files opened
// relative to them.
bool WorthCaching(std::string_view path);

// openat(2) of `name` in the directory `directory_fd`. Returns 0 or an errno value.
int OpenReadOnlyAt(int directory_fd, const char* name, base::UniqueFd* out);

}  // namespace rail::sysfs::detail
