#include "rail/sysfs/read_errors.h"

#include <cerrno>
#include <system_error>
#include <utility>

#include "sysfs/read_file.h"

namespace rail::sysfs {

const char* ReadFailureName(ReadFailure failure) {
  switch (failure) {
    case ReadFailure::kInvalidArgument:
      return "invalid_argument";
    case ReadFailure::kPermissionDenied:
      return "permission_denied";
    case ReadFailure::kIoError:
      return "io_error";
    case ReadFailure::kMissing:
      return "missing";
    case ReadFailure::kMalformed:
      return "malformed";
  }
  return "io_error";
}

ReadFailure ReadFailureFromErrno(int error) {
  switch (error) {
    case EINVAL:
      return ReadFailure::kInvalidArgument;
    case EACCES:
    case EPERM:
      return ReadFailure::kPermissionDenied;
    case ENOENT:
      return ReadFailure::kMissing;
    default:
      return ReadFailure::kIoError;
  }
}

void ReadErrors::Add(std::string path, ReadFailure failure, std::string detail) {
  problems_.push_back(ReadProblem{std::move(path), failure, std::move(detail)});
}

void ReadErrors::AddErrno(std::string path, int error) {
  // generic_category().message() is thread-safe, unlike strerror().
  Add(std::move(path), ReadFailureFromErrno(error), std::generic_category().message(error));
}

std::uint64_t ReadErrors::Count(ReadFailure failure) const {
  std::uint64_t count = 0;
  for (const ReadProblem& problem : problems_) {
    if (problem.failure == failure) ++count;
  }
  return count;
}

namespace detail {

std::string JoinPath(std::string_view directory, std::string_view name) {
  std::string path;
  path.reserve(directory.size() + 1 + name.size());
  path.append(directory);
  if (!path.empty() && path.back() != '/') path.push_back('/');
  path.append(name);
  return path;
}

std::optional<std::string> ReadText(const Filesystem& fs, const std::string& path,
                                    ReadErrors& errors, Presence presence) {
  std::string contents;
  const int error = fs.ReadFile(path, &contents);
  if (error == 0) return contents;
  if (error == EINVAL && presence == Presence::kUnknownWhenDown) return std::nullopt;
  if (error != ENOENT || presence == Presence::kRequired) errors.AddErrno(path, error);
  return std::nullopt;
}

std::optional<std::string> ReadString(const Filesystem& fs, const std::string& path,
                                      ReadErrors& errors, Presence presence) {
  auto text = ReadText(fs, path, errors, presence);
  if (!text) return std::nullopt;
  return std::string(TrimValue(*text));
}

namespace {

std::vector<std::string> NamesOrNone(int error, std::vector<std::string> names,
                                     const std::string& path, ReadErrors& errors,
                                     Presence presence) {
  if (error == 0) return names;
  if (error != ENOENT || presence == Presence::kRequired) errors.AddErrno(path, error);
  return {};
}

}  // namespace

std::vector<std::string> ListNames(const Filesystem& fs, const std::string& path,
                                   ReadErrors& errors, Presence presence) {
  std::vector<std::string> names;
  const int error = fs.ListDirectory(path, &names);
  return NamesOrNone(error, std::move(names), path, errors, presence);
}

std::vector<std::string> ListAttributeNames(const Filesystem& fs, const std::string& path,
                                            ReadErrors& errors, Presence presence) {
  std::vector<std::string> names;
  const int error = fs.ListAttributeGroup(path, &names);
  return NamesOrNone(error, std::move(names), path, errors, presence);
}

void AddMalformed(ReadErrors& errors, const std::string& path, std::string_view text) {
  // The offending content goes into the detail, cut short: it may be a whole binary file.
  constexpr std::size_t kMaxDetail = 64;
  errors.Add(path, ReadFailure::kMalformed, std::string(TrimValue(text.substr(0, kMaxDetail))));
}

}  // namespace detail
}  // namespace rail::sysfs
