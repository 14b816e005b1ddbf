#include "sysfs/port_counters.h"

#include <algorithm>
#include <limits>

#include "sysfs/read_file.h"

namespace rail::sysfs {
namespace detail {

std::optional<PortCounter> ReadPortCounter(const Filesystem& fs, const std::string& path,
                                           unsigned width_bits, std::uint64_t unit,
                                           ReadErrors& errors) {
  auto text = ReadText(fs, path, errors, Presence::kOptional);
  if (!text) return std::nullopt;
  auto parsed = ParseCounterText(*text);
  if (!parsed) {
    AddMalformed(errors, path, *text);
    return std::nullopt;
  }
  if (parsed->not_available) return std::nullopt;

  const std::uint64_t raw = *parsed->value;
  PortCounter counter;
  counter.width_bits = width_bits;
  // A value above the classic maximum proves the driver serves a wider counter than the
  // unicast_*/counters_ext rule detects (procfs' hfi1 fixture: 273558326543 words without
  // either), so it cannot be pegged at the classic maximum.
  if (width_bits < 64 && raw > (std::uint64_t{1} << width_bits) - 1) counter.width_bits = 64;
  counter.saturated = IsSaturated(raw, counter.width_bits);
  if (unit > 1 && raw > std::numeric_limits<std::uint64_t>::max() / unit) {
    counter.value = std::numeric_limits<std::uint64_t>::max();
    counter.saturated = true;
  } else {
    counter.value = raw * unit;
  }
  return counter;
}

unsigned PmaCounterWidth(const PmaCounterSpec& spec, bool has_extended_counters) {
  return spec.extended_width && has_extended_counters ? 64 : spec.width_bits;
}

std::uint64_t CountersExtUnit(std::string_view name) {
  return name.find("_data") != std::string_view::npos ? 4 : 1;
}

}  // namespace detail

namespace {

using detail::JoinPath;

bool RereadPmaCounters(const Filesystem& sys, const std::string& dir, InfinibandPort& port,
                       ReadErrors& errors) {
  const auto& specs = PmaCounterSpecs();
  for (auto& [name, counter] : port.counters) {
    // Clang before 16 cannot capture a structured binding, so the lambda gets a plain reference.
    const std::string& file = name;
    const auto spec = std::find_if(specs.begin(), specs.end(),
                                   [&](const PmaCounterSpec& s) { return file == s.file; });
    if (spec == specs.end()) return false;
    auto value = detail::ReadPortCounter(sys, JoinPath(dir, "counters/" + name),
                                         detail::PmaCounterWidth(*spec, port.has_extended_counters),
                                         spec->unit, errors);
    if (!value) return false;
    counter = *value;
  }
  for (auto& [name, counter] : port.counters_ext) {
    auto value = detail::ReadPortCounter(sys, JoinPath(dir, "counters_ext/" + name), 64,
                                         detail::CountersExtUnit(name), errors);
    if (!value) return false;
    counter = *value;
  }
  return true;
}

bool RereadValues(const Filesystem& sys, const std::string& dir,
                  std::map<std::string, std::uint64_t>& values, ReadErrors& errors) {
  for (auto& [name, value] : values) {
    auto read = detail::ReadParsed(sys, JoinPath(dir, name), errors, detail::Presence::kOptional,
                                   ParseUnsigned);
    if (!read) return false;
    value = *read;
  }
  return true;
}

}  // namespace

bool RereadCounters(const Filesystem& sys, std::vector<InfinibandDevice>& devices,
                    ReadErrors& errors) {
  for (InfinibandDevice& device : devices) {
    for (InfinibandPort& port : device.ports) {
      const std::string dir = detail::PortDirectory(device.name, port.number);
      if (!RereadPmaCounters(sys, dir, port, errors) ||
          !RereadValues(sys, JoinPath(dir, "hw_counters"), port.hw_counters, errors)) {
        return false;
      }
      if (!port.netdev_statistics.empty() &&
          (!device.parent || !RereadValues(sys, "class/net/" + *device.parent + "/statistics",
                                           port.netdev_statistics, errors))) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace rail::sysfs
