#include "rail/sysfs/filesystem.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace rail::sysfs {
namespace {

std::string_view StripSlashes(std::string_view path) {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return path;
}

// Builds root/relative into a caller buffer: ReadFile runs ~15,000 times per scrape on a large
// host, and a heap allocation per path is measurable there. False when the path does not fit.
bool BuildPath(const std::string& root, std::string_view relative, char (&out)[PATH_MAX]) {
  relative = StripSlashes(relative);
  const std::size_t total = root.size() + 1 + relative.size();
  if (total >= PATH_MAX) return false;
  std::memcpy(out, root.data(), root.size());
  std::size_t used = root.size();
  if (!relative.empty()) {
    out[used++] = '/';
    std::memcpy(out + used, relative.data(), relative.size());
    used += relative.size();
  }
  out[used] = '\0';
  return true;
}

}  // namespace

RootedFilesystem::RootedFilesystem(std::string root) : root_(std::move(root)) {
  // "/" and "/sys/" both work: Resolve inserts the separator itself.
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  if (root_ == "/") root_.clear();
}

std::string RootedFilesystem::Resolve(std::string_view relative_path) const {
  relative_path = StripSlashes(relative_path);
  std::string path;
  path.reserve(root_.size() + 1 + relative_path.size());
  path.append(root_);
  // An empty root stands for "/", so the bare root resolves to "/" too.
  if (!relative_path.empty() || path.empty()) path.push_back('/');
  path.append(relative_path);
  return path;
}

int RootedFilesystem::ReadFile(std::string_view relative_path, std::string* contents) const {
  char path[PATH_MAX];
  if (!BuildPath(root_, relative_path, path)) return ENAMETOOLONG;
  if (path[0] == '\0') return EISDIR;  // the bare root of "/"
  int fd;
  do {
    fd = ::open(path, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno;

  contents->clear();
  // sysfs attributes are at most one page and report st_size 4096 whatever they hold, so fstat
  // is useless; read until EOF instead. Errors such as EINVAL arrive here, not at open().
  char buffer[4096];
  int error = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      contents->append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR) continue;
    error = errno;
    break;
  }
  ::close(fd);
  if (error != 0) contents->clear();
  return error;
}

int RootedFilesystem::ListDirectory(std::string_view relative_path,
                                    std::vector<std::string>* names) const {
  names->clear();
  DIR* dir = ::opendir(Resolve(relative_path).c_str());
  if (dir == nullptr) return errno;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) break;
    const char* name = entry->d_name;
    if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
    names->emplace_back(name);
  }
  const int error = errno;
  ::closedir(dir);
  if (error != 0) {
    names->clear();
    return error;
  }
  std::sort(names->begin(), names->end());
  return 0;
}

bool RootedFilesystem::IsDirectory(std::string_view relative_path) const {
  struct stat st;
  return ::stat(Resolve(relative_path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool RootedFilesystem::Exists(std::string_view relative_path) const {
  struct stat st;
  return ::stat(Resolve(relative_path).c_str(), &st) == 0;
}

}  // namespace rail::sysfs
