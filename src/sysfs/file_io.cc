#include "sysfs/file_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rail::sysfs::detail {

std::string_view StripSlashes(std::string_view path) {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return path;
}

std::string_view ParentOf(std::string_view relative) {
  const std::size_t slash = relative.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : relative.substr(0, slash);
}

bool BuildPath(const std::string& root, std::string_view relative, char (&out)[PATH_MAX]) {
  relative = StripSlashes(relative);
  const std::size_t total = root.size() + 1 + relative.size();
  if (total >= PATH_MAX) return false;
  std::memcpy(out, root.data(), root.size());
  std::size_t used = root.size();
  // An empty root stands for "/", so the bare root resolves to "/" too.
  if (!relative.empty() || used == 0) out[used++] = '/';
  // memcpy from the null data() of an empty view is undefined even for zero bytes.
  if (!relative.empty()) std::memcpy(out + used, relative.data(), relative.size());
  used += relative.size();
  out[used] = '\0';
  return true;
}

int OpenReadOnly(const char* path, int flags, base::UniqueFd* out) {
  int fd;
  do {
    fd = ::open(path, O_RDONLY | O_CLOEXEC | flags);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno;
  *out = base::UniqueFd(fd);
  return 0;
}

int OpenReadOnlyAt(int directory_fd, const char* name, base::UniqueFd* out) {
  int fd;
  do {
    fd = ::openat(directory_fd, name, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno;
  *out = base::UniqueFd(fd);
  return 0;
}

FileKind Classify(int fd) {
  struct statfs fs;
  if (::fstatfs(fd, &fs) == 0) {
    if (fs.f_type == SYSFS_MAGIC) return FileKind::kSysfs;
    if (fs.f_type == PROC_SUPER_MAGIC) return FileKind::kProcfs;
  }
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) return FileKind::kRegular;
  return FileKind::kOther;
}

int ReadFrom(int fd, FileKind kind, off_t offset, std::string* contents) {
  char buffer[4096];  // one page, the most a sysfs attribute can hold
  for (;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof(buffer), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      contents->clear();
      return error;
    }
    if (n == 0) return 0;
    contents->append(buffer, static_cast<std::size_t>(n));
    offset += n;
    if (static_cast<std::size_t>(n) < sizeof(buffer) && kind != FileKind::kProcfs &&
        kind != FileKind::kOther) {
      return 0;
    }
  }
}

int ReadAll(int fd, FileKind kind, std::string* contents) {
  contents->clear();
  return ReadFrom(fd, kind, 0, contents);
}

int ReadNames(int fd, std::vector<std::string>* names) {
  names->clear();
  if (::lseek(fd, 0, SEEK_SET) < 0) return errno;
  alignas(dirent64) char buffer[16384];
  for (;;) {
    const ssize_t n = ::getdents64(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      names->clear();
      return error;
    }
    if (n == 0) return 0;
    for (ssize_t offset = 0; offset < n;) {
      const auto* entry = reinterpret_cast<const dirent64*>(buffer + offset);
      offset += entry->d_reclen;
      const char* name = entry->d_name;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
      names->emplace_back(name);
    }
  }
}

DirectoryLook DescribeDirectory(const struct stat* st) {
  if (st == nullptr) return {{}, true};
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  // More than one second: some filesystems keep whole seconds.
  const bool settled = now.tv_sec - st->st_ctim.tv_sec > 1 ||
                       (now.tv_sec - st->st_ctim.tv_sec == 1 && now.tv_nsec > st->st_ctim.tv_nsec);
  return {{st->st_dev, st->st_ino, st->st_ctim, true}, settled};
}

DirectoryLook LookAtDirectory(const std::string& root, std::string_view relative) {
  char path[PATH_MAX];
  struct stat st;
  const bool found = BuildPath(root, relative, path) && ::stat(path, &st) == 0;
  return DescribeDirectory(found ? &st : nullptr);
}

std::int64_t CoarseNowNs() {
  // The coarse clock is a vDSO read even where the precise one falls back to a system call,
  // and a tick of error is nothing against a one-second interval.
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

std::size_t CacheCapacity(std::size_t wanted) {
  // Leave at least half of the descriptors to everything else the process opens (sockets of
  // concurrent scrapes, probes).
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    wanted = std::min<std::size_t>(wanted, static_cast<std::size_t>(limit.rlim_cur / 2));
  }
  return wanted;
}

bool WorthCaching(std::string_view path) {
  for (std::string_view rest = path; !rest.empty();) {
    const std::size_t slash = rest.find('/');
    const std::string_view component = rest.substr(0, slash);
    if (component == "gids" || component == "gid_attrs") return false;
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return true;
}

}  // namespace rail::sysfs::detail
