// Internal helpers shared by the readers: read one file or directory, record why it failed, and
// hand back nothing rather than throwing. Not part of the public API.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rail/sysfs/filesystem.h"
#include "rail/sysfs/read_errors.h"
#include "rail/sysfs/values.h"

namespace rail::sysfs::detail {

// Whether ENOENT is worth recording: many attributes exist only on some drivers or kernels.
// kUnknownWhenDown: the kernel answers EINVAL for carrier and speed of an interface that is down
// (and for lo's speed); that means "unknown", which a healthy host has every scrape, so it is not
// recorded as a failure.
enum class Presence { kOptional, kRequired, kUnknownWhenDown };

std::string JoinPath(std::string_view directory, std::string_view name);

// The raw contents, or nullopt with the failure recorded (ENOENT only when kRequired).
std::optional<std::string> ReadText(const Filesystem& fs, const std::string& path,
                                    ReadErrors& errors, Presence presence);

// ReadText with TrimValue applied.
std::optional<std::string> ReadString(const Filesystem& fs, const std::string& path,
                                      ReadErrors& errors, Presence presence);

// Sorted entries, or empty with the failure recorded (ENOENT only when kRequired).
std::vector<std::string> ListNames(const Filesystem& fs, const std::string& path,
                                   ReadErrors& errors, Presence presence);

// ListNames of an attribute group (Filesystem::ListAttributeGroup): counters/, hw_counters/,
// statistics/.
std::vector<std::string> ListAttributeNames(const Filesystem& fs, const std::string& path,
                                            ReadErrors& errors, Presence presence);

void AddMalformed(ReadErrors& errors, const std::string& path, std::string_view text);

// Reads and parses one value with `parse` (text -> std::optional<T>); text that does not parse
// is recorded as kMalformed.
template <typename Parser>
auto ReadParsed(const Filesystem& fs, const std::string& path, ReadErrors& errors,
                Presence presence, Parser parse) -> decltype(parse(std::string_view{})) {
  auto text = ReadText(fs, path, errors, presence);
  if (!text) return std::nullopt;
  auto value = parse(std::string_view(*text));
  if (!value) AddMalformed(errors, path, *text);
  return value;
}

}  // namespace rail::sysfs::detail
