// What a NIC driver lists for `ethtool -S`: a recorded dump (rail::nic::ParseEthtoolDump) or the
// kernel's GSTRINGS/GSTATS answer (rail::nic::DecodeStatistics), through the allow-list of a
// driver, the ethtool collector and the fabric checks' reasons, to the text exposition.
//
// Input: byte 0 picks the form (even: dump text; odd: the kernel's answer, N names of 32 bytes
// then N 64-bit values), byte 1 the driver (mlx5_core, bnxt_en, ice, another), the rest is the
// answer. It is scraped twice, every value one higher the second time, so the checks judge rises.
//
// Invariants: the exposition is valid whatever the driver says: UTF-8, one TYPE line per family,
// no two samples with one name and label set, every label value escaped, every value a number.
#include <prometheus/text_serializer.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "rail/base/clock.h"
#include "rail/collectors/collector_set.h"
#include "rail/nic/ethtool.h"
#include "rail/sysfs/filesystem.h"

namespace {

using rail::nic::EthtoolStatistics;

constexpr std::size_t kNameBytes = 32;  // ETH_GSTRING_LEN

class FuzzedStatistics final : public rail::nic::StatisticsSource {
 public:
  FuzzedStatistics(EthtoolStatistics statistics, std::string driver)
      : statistics_(std::move(statistics)), driver_(std::move(driver)) {}
  int Read(const std::string&, EthtoolStatistics* out) const override {
    *out = statistics_;
    return 0;
  }
  std::optional<std::string> Driver(const std::string&) const override { return driver_; }
  void Rise() {
    for (auto& value : statistics_.values) value += 1;
  }

 private:
  EthtoolStatistics statistics_;
  std::string driver_;
};

class StepClock final : public rail::base::Clock {
 public:
  rail::base::TimePoint Now() const override { return now_; }
  rail::base::WallTime WallNow() const override { return {}; }
  void Step() { now_ += std::chrono::seconds(30); }

 private:
  rail::base::TimePoint now_{std::chrono::hours(1)};
};

EthtoolStatistics Decode(std::string_view bytes, bool kernel) {
  if (!kernel) return rail::nic::ParseEthtoolDump(bytes);
  const std::size_t count = bytes.size() / (kNameBytes + sizeof(std::uint64_t));
  std::vector<std::uint64_t> values(count);
  if (count > 0) {
    std::memcpy(values.data(), bytes.data() + count * kNameBytes, count * sizeof(std::uint64_t));
  }
  return rail::nic::DecodeStatistics(bytes.substr(0, count * kNameBytes), values);
}

bool ValidUtf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t length = byte < 0x80         ? 1
                               : (byte >> 5) == 6  ? 2
                               : (byte >> 4) == 14 ? 3
                               : (byte >> 3) == 30 ? 4
                                                   : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 2) return false;
    }
    i += length;
  }
  return true;
}

// Each sample line "name{labels} value": the series (everything before the last space) once, and
// a value that is a number.
void CheckExposition(const std::string& text) {
  FUZZ_CHECK(ValidUtf8(text), "the exposition is UTF-8");
  std::set<std::string> types;
  std::set<std::string> series;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    FUZZ_CHECK(end != std::string::npos, "every line ends with a newline");
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind("# TYPE ", 0) == 0) {
      FUZZ_CHECK(types.insert(line.substr(7, line.find(' ', 7) - 7)).second,
                 "one TYPE line per family");
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    FUZZ_CHECK(space != std::string::npos, "a sample has a value");
    FUZZ_CHECK(series.insert(line.substr(0, space)).second, "no series twice");
    const std::string value = line.substr(space + 1);
    char* parsed_end = nullptr;
    std::strtod(value.c_str(), &parsed_end);
    FUZZ_CHECK(value == "Nan" || value == "+Inf" || value == "-Inf" ||
                   (parsed_end != nullptr && *parsed_end == '\0' && !value.empty()),
               "every value is a number");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  static const char* kDrivers[] = {"mlx5_core", "bnxt_en", "ice", "veth"};
  const bool kernel = (data[0] & 1) != 0;
  FuzzedStatistics statistics(Decode(rail::fuzz::AsText(data + 2, size - 2), kernel),
                              kDrivers[data[1] % 4]);
  static const rail::sysfs::RootedFilesystem kNoSysfs("/nonexistent-rail-fuzz-root");
  StepClock clock;
  rail::collectors::Sources sources;
  sources.inventory.sys = &kNoSysfs;
  sources.inventory.proc = &kNoSysfs;
  sources.inventory.nic_statistics = &statistics;
  sources.inventory.rails = {{.name = "rail0", .netdev = std::string("eth0")}};
  sources.health.clock = &clock;
  const rail::collectors::CollectorSet set(sources, {"ethtool", "health"});
  set.Collect();
  statistics.Rise();
  clock.Step();
  const prometheus::TextSerializer serializer;
  CheckExposition(serializer.Serialize(set.Collect()));
  return 0;
}
