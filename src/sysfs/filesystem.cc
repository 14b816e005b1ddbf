#include "rail/sysfs/filesystem.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sysfs/file_cache.h"
#include "sysfs/file_io.h"

// Why files are kept open, and what keeps the answers right: see file_cache.h.

namespace rail::sysfs {
using base::UniqueFd;
using detail::BuildPath;
using detail::CacheCapacity;
using detail::Classify;
using detail::FileKind;
using detail::OpenReadOnly;
using detail::OpenReadOnlyAt;
using detail::ParentOf;
using detail::ReadAll;
using detail::ReadFrom;
using detail::ReadNames;
using detail::StripSlashes;
using detail::WorthCaching;

namespace {

// A file outside the cache, whose kind is not asked (an fstatfs each): read to its end.
int ReadUnclassified(int fd, std::string* contents) {
  contents->clear();
  const int error = ReadFrom(fd, FileKind::kSysfs, 0, contents);
  if (error != 0) return error;
  return ReadFrom(fd, FileKind::kOther, static_cast<off_t>(contents->size()), contents);
}

// The root with every link followed and a trailing '/', or "" when it does not resolve (yet).
std::string RealRoot(const std::string& root) {
  char* real_root = ::realpath(root.empty() ? "/" : root.c_str(), nullptr);
  if (real_root == nullptr) return {};
  std::string real(real_root);
  std::free(real_root);
  if (!real.ends_with('/')) real += '/';
  return real;
}

}  // namespace

RootedFilesystem::RootedFilesystem(std::string root) : RootedFilesystem(std::move(root), {}) {}

RootedFilesystem::RootedFilesystem(std::string root, const Options& options)
    : root_(std::move(root)) {
  // "/" and "/sys/" both work: Resolve inserts the separator itself.
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  if (root_ == "/") root_.clear();
  real_root_ = RealRoot(root_);
  if (options.cache_open_files) {
    const std::size_t capacity = CacheCapacity(options.max_cached_files);
    if (capacity > 0) {
      cache_ = std::make_unique<FileCache>(root_, capacity, options.directory_check_interval);
    }
  }
}

RootedFilesystem::~RootedFilesystem() = default;

std::size_t RootedFilesystem::cached_files() const {
  return cache_ ? cache_->size() : 0;
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

// Runs `read` on the cached descriptor of `key` when there is one the cache can vouch for.
// True when that answered; false when the caller must open the path afresh: nothing cached,
// the path leads elsewhere now, or the read failed (gone, or failing now), so that the answer
// is always the path's.
template <typename ReadFn>
bool RootedFilesystem::ReadCached(std::string_view key, bool directory, ReadFn read) const {
  FileCache::Lease lease;
  switch (cache_->CheckOut(key, &lease)) {
    case FileCache::Verdict::kMiss:
      return false;
    case FileCache::Verdict::kStale:
      break;
    case FileCache::Verdict::kCheckDirectory:
      if (!cache_->StillCurrent(lease)) break;
      [[fallthrough]];
    case FileCache::Verdict::kCurrent:
      if ((lease.file->kind == FileKind::kDirectory) == directory && read(*lease.file) == 0) {
        cache_->PutBack(lease);
        return true;
      }
      break;
  }
  cache_->Drop(lease);
  return false;
}

int RootedFilesystem::ReadFile(std::string_view relative_path, std::string* contents) const {
  const std::string_view key = StripSlashes(relative_path);
  const bool keep = cache_ && WorthCaching(key);
  if (keep && ReadCached(key, false, [&](const FileCache::File& file) {
        return ReadAll(file.fd.get(), file.kind, contents);
      })) {
    return 0;
  }
  if (keep && cache_->KnownAbsent(key)) return ENOENT;
  if (cache_ && !keep) {
    if (const auto answer = ReadInKeptDirectory(key, contents)) return *answer;
  }

  char path[PATH_MAX];
  if (!BuildPath(root_, key, path)) return ENAMETOOLONG;
  base::UniqueFd fd;
  int error = OpenReadOnly(path, 0, &fd);
  if ((error == EMFILE || error == ENFILE) && cache_) {
    cache_->Clear();
    error = OpenReadOnly(path, 0, &fd);
  }
  if (error == ENOENT && keep) cache_->NoteAbsent(key);
  if (error != 0) return error;
  if (!keep) return ReadUnclassified(fd.get(), contents);
  // Read first, as sysfs would: a failing file (EINVAL of a down link's speed) then costs no
  // more system calls than it did before caching, and it is never cached.
  contents->clear();
  error = ReadFrom(fd.get(), FileKind::kSysfs, 0, contents);
  if (error != 0) return error;
  const FileKind kind = Classify(fd.get());
  if (kind == FileKind::kProcfs || kind == FileKind::kOther) {
    error = ReadFrom(fd.get(), kind, static_cast<off_t>(contents->size()), contents);
    if (error != 0) return error;
  }
  if (kind != FileKind::kOther) cache_->Insert(key, std::move(fd), kind);
  return 0;
}

// A file the cache does not keep (a GID slot) is opened relative to its directory's kept
// descriptor: a table's 128 slots then cost no walk from the root each. nullopt when the
// directory is not kept yet (it is from now on) or no longer vouched for: open by the path.
std::optional<int> RootedFilesystem::ReadInKeptDirectory(std::string_view key,
                                                         std::string* contents) const {
  const std::string_view parent = ParentOf(key);
  if (parent.empty()) return std::nullopt;
  const std::string name(key.substr(parent.size() + 1));
  int error = 0;
  if (ReadCached(parent, true, [&](FileCache::File& directory) {
        if (!directory.on_sysfs) {
          directory.on_sysfs = Classify(directory.fd.get()) == FileKind::kSysfs;
        }
        base::UniqueFd fd;
        error = OpenReadOnlyAt(directory.fd.get(), name.c_str(), &fd);
        if (error != 0) return 0;  // the directory answered, whatever the file's own answer
        error = *directory.on_sysfs ? ReadAll(fd.get(), FileKind::kSysfs, contents)
                                    : ReadUnclassified(fd.get(), contents);
        return 0;
      })) {
    // Not found in the kept directory, which may be a removed device's until its next look:
    // the path is asked, so that a re-created device's table is never read as empty.
    if (error == ENOENT) return std::nullopt;
    return error;
  }
  char path[PATH_MAX];
  base::UniqueFd directory;
  if (BuildPath(root_, parent, path) && OpenReadOnly(path, O_DIRECTORY, &directory) == 0) {
    cache_->Insert(parent, std::move(directory), FileKind::kDirectory);
  }
  return std::nullopt;
}

int RootedFilesystem::ListDirectory(std::string_view relative_path,
                                    std::vector<std::string>* names) const {
  names->clear();
  const std::string_view key = StripSlashes(relative_path);
  const bool keep = cache_ != nullptr;  // every directory, GID tables' too (see WorthCaching)
  if (!keep || !ReadCached(key, true, [&](const FileCache::File& file) {
        return ReadNames(file.fd.get(), names);
      })) {
    if (keep && cache_->KnownAbsent(key)) return ENOENT;
    char path[PATH_MAX];
    if (!BuildPath(root_, key, path)) return ENAMETOOLONG;
    base::UniqueFd fd;
    int error = OpenReadOnly(path, O_DIRECTORY, &fd);
    if ((error == EMFILE || error == ENFILE) && cache_) {
      cache_->Clear();
      error = OpenReadOnly(path, O_DIRECTORY, &fd);
    }
    if (error == ENOENT && keep) cache_->NoteAbsent(key);
    if (error != 0) return error;
    error = ReadNames(fd.get(), names);
    if (error != 0) return error;
    if (keep) cache_->Insert(key, std::move(fd), FileKind::kDirectory);
  }
  std::sort(names->begin(), names->end());
  return 0;
}

int Filesystem::ListAttributeGroup(std::string_view relative_path,
                                   std::vector<std::string>* names) const {
  return ListDirectory(relative_path, names);
}

// The first listing opens the directory (ListDirectory), the second lists it on the kept
// descriptor and keeps the names, the later ones copy them.
int RootedFilesystem::ListAttributeGroup(std::string_view relative_path,
                                         std::vector<std::string>* names) const {
  const std::string_view key = StripSlashes(relative_path);
  if (cache_ && ReadCached(key, true, [&](FileCache::File& file) {
        if (!file.listing) {
          std::vector<std::string> listing;
          const int error = ReadNames(file.fd.get(), &listing);
          if (error != 0) return error;
          std::sort(listing.begin(), listing.end());
          file.listing = std::move(listing);
        }
        *names = *file.listing;
        return 0;
      })) {
    return 0;
  }
  return ListDirectory(relative_path, names);
}

bool RootedFilesystem::IsDirectory(std::string_view relative_path) const {
  const std::string_view key = StripSlashes(relative_path);
  if (cache_ && cache_->VouchesForDirectory(key)) return true;
  struct stat st;
  const bool found = ::stat(Resolve(key).c_str(), &st) == 0;
  if (cache_) cache_->Observed(key, found ? &st : nullptr);
  return found && S_ISDIR(st.st_mode);
}

bool RootedFilesystem::Exists(std::string_view relative_path) const {
  const std::string_view key = StripSlashes(relative_path);
  if (cache_ && cache_->VouchesForDirectory(key)) return true;
  struct stat st;
  const bool found = ::stat(Resolve(key).c_str(), &st) == 0;
  if (cache_) cache_->Observed(key, found ? &st : nullptr);
  return found;
}

int Filesystem::ResolvePath(std::string_view, std::string*) const {
  return ENOSYS;
}

int Filesystem::LinkTargetName(std::string_view, std::string*) const {
  return ENOSYS;
}

int RootedFilesystem::LinkTargetName(std::string_view relative_path, std::string* name) const {
  std::array<char, PATH_MAX> target{};
  const ssize_t length =
      ::readlink(Resolve(StripSlashes(relative_path)).c_str(), target.data(), target.size());
  if (length < 0) return errno;
  if (static_cast<std::size_t>(length) == target.size()) return ENAMETOOLONG;
  std::string_view text(target.data(), static_cast<std::size_t>(length));
  while (text.size() > 1 && text.back() == '/') text.remove_suffix(1);
  const std::string_view last = text.substr(text.rfind('/') + 1);
  if (last.empty() || last == "." || last == "..") return EINVAL;
  name->assign(last);
  return 0;
}

int RootedFilesystem::ResolvePath(std::string_view relative_path, std::string* resolved) const {
  char* real = ::realpath(Resolve(StripSlashes(relative_path)).c_str(), nullptr);
  if (real == nullptr) return errno;
  const std::string absolute(real);
  std::free(real);
  // Resolved once: realpath(3) of the root costs as much as the path's own.
  std::string root = real_root_.empty() ? RealRoot(root_) : real_root_;
  if (root.empty()) return ENOENT;
  if (absolute + "/" == root) {
    resolved->clear();
    return 0;
  }
  if (!absolute.starts_with(root)) return EXDEV;
  *resolved = absolute.substr(root.size());
  return 0;
}

}  // namespace rail::sysfs
