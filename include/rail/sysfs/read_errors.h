// Accounting for files that could not be read or parsed. The environment failing is never
// fatal: the reader skips the value, records why, and goes on with the next file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rail::sysfs {

// Why a value is missing. Exported as the `reason` label of rail_exporter_read_errors_total.
enum class ReadFailure {
  kInvalidArgument,   // EINVAL: e.g. gid_attrs of an empty GID slot, PMA not supported
  kPermissionDenied,  // EACCES / EPERM: restricted PFs, non-root readers
  kIoError,           // EIO and anything else the kernel answers
  kMissing,           // ENOENT on a file that the kernel always provides
  kMalformed,         // the file was read but its text does not parse
};

const char* ReadFailureName(ReadFailure failure);
ReadFailure ReadFailureFromErrno(int error);

struct ReadProblem {
  std::string path;  // relative to the filesystem root
  ReadFailure failure;
  std::string detail;  // strerror text or the offending content
};

// Collects problems during one read pass. Not thread-safe: one per scrape.
class ReadErrors {
 public:
  void Add(std::string path, ReadFailure failure, std::string detail = {});
  void AddErrno(std::string path, int error);

  const std::vector<ReadProblem>& problems() const { return problems_; }
  std::uint64_t Count(ReadFailure failure) const;
  bool empty() const { return problems_.empty(); }

 private:
  std::vector<ReadProblem> problems_;
};

}  // namespace rail::sysfs
