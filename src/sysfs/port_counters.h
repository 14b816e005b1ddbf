// Reading one RDMA port counter file, shared by the first read of a device (infiniband.cc) and
// the re-reads of its values (port_counters.cc). Not part of the public API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rail/sysfs/infiniband.h"

namespace rail::sysfs::detail {

// One counter file. `width_bits` is the assumed width; `unit` converts words to bytes.
std::optional<PortCounter> ReadPortCounter(const Filesystem& fs, const std::string& path,
                                           unsigned width_bits, std::uint64_t unit,
                                           ReadErrors& errors);

// A PMA counter's width: its classic one, or 64 bits when the port has extended counters and the
// counter is one they widen.
unsigned PmaCounterWidth(const PmaCounterSpec& spec, bool has_extended_counters);

// counters_ext/<name>'s unit: port_xmit_data_64 and port_rcv_data_64 count 4-byte words like
// their 32-bit siblings.
std::uint64_t CountersExtUnit(std::string_view name);

// class/infiniband/<device>/ports/<port> (infiniband.cc)
std::string PortDirectory(const std::string& device, unsigned port);

}  // namespace rail::sysfs::detail
