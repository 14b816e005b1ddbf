#include "rail/probe/fabric_evidence.h"

#include <algorithm>
#include <sstream>

#include "rail/sysfs/values.h"

namespace rail::probe {
namespace {

void ReadCounter(const sysfs::Filesystem& sys, const std::string& path, const std::string& key,
                 std::map<std::string, std::uint64_t>* out) {
  std::string text;
  if (sys.ReadFile(path, &text) != 0) return;
  if (const auto value = sysfs::ParseUnsigned(text)) (*out)[key] = *value;
}

// The netdevs whose NIC counters stand for the rail's: a bond's slaves (class/net/<bond>/bonding/
// slaves; the bond lists no NIC statistics of its own), else the netdev itself.
std::vector<std::string> EvidenceNetdevs(const sysfs::Filesystem& sys, const std::string& netdev) {
  std::string text;
  if (sys.ReadFile("class/net/" + netdev + "/bonding/slaves", &text) != 0) return {netdev};
  std::vector<std::string> slaves;
  std::istringstream words(text);
  for (std::string slave; words >> slave;) slaves.push_back(slave);
  return slaves;
}

const nic::FabricReading* FindReading(const std::vector<nic::FabricReading>& readings,
                                      const std::string& netdev) {
  const auto found =
      std::find_if(readings.begin(), readings.end(),
                   [&](const nic::FabricReading& one) { return one.netdev == netdev; });
  return found == readings.end() ? nullptr : &*found;
}

const nic::FabricSample* FindSource(const nic::FabricReading& reading, const std::string& source) {
  const auto found =
      std::find_if(reading.samples.begin(), reading.samples.end(),
                   [&](const nic::FabricSample& sample) { return sample.source == source; });
  return found == reading.samples.end() ? nullptr : &*found;
}

}  // namespace

bool IsRunEvidence(nic::FabricCounter counter) {
  return counter != nic::FabricCounter::kOutboundPciStalledPercent;
}

RailFabricEvidence FabricEvidence(const std::string& rail, const RailFabricSample& before,
                                  const RailFabricSample& after) {
  RailFabricEvidence evidence;
  evidence.rail = rail;
  evidence.seconds = std::chrono::duration<double>(after.at - before.at).count();
  for (const auto& reading : after.nic) {
    const nic::FabricReading* start = FindReading(before.nic, reading.netdev);
    if (start == nullptr) continue;
    nic::FabricReading rises = reading;
    rises.samples.clear();
    for (const auto& sample : reading.samples) {
      const nic::FabricSample* first = FindSource(*start, sample.source);
      if (first == nullptr || sample.value < first->value) continue;
      rises.samples.push_back(sample);
      rises.samples.back().value = sample.value - first->value;
    }
    if (!rises.samples.empty()) evidence.nic.push_back(std::move(rises));
  }
  for (const auto& [key, value] : after.counters) {
    const auto first = before.counters.find(key);
    if (first == before.counters.end() || value < first->second) continue;
    evidence.counters[key] = value - first->second;
  }
  return evidence;
}

FabricEvidenceReader::FabricEvidenceReader(const sysfs::Filesystem& sys,
                                           const nic::StatisticsSource* statistics)
    : sys_(sys), statistics_(statistics != nullptr ? *statistics : nic::KernelStatistics()) {}

RailFabricSample FabricEvidenceReader::Read(const ProbeRail& rail) const {
  RailFabricSample sample;
  sample.at = std::chrono::steady_clock::now();
  if (!rail.netdev.empty()) {
    // class/net/<netdev>/carrier_down_count: the link went down (or was set down).
    ReadCounter(sys_, "class/net/" + rail.netdev + "/carrier_down_count", "carrier_down_count",
                &sample.counters);
    for (const auto& netdev : EvidenceNetdevs(sys_, rail.netdev)) {
      nic::FabricReading reading;
      if (nic::ReadFabricReading(statistics_, sys_, netdev, &reading) != 0) continue;
      std::erase_if(reading.samples,
                    [](const nic::FabricSample& one) { return !IsRunEvidence(one.counter); });
      if (!reading.samples.empty()) sample.nic.push_back(std::move(reading));
    }
  }
  if (!rail.rdma_device.empty()) {
    const std::string port =
        "class/infiniband/" + rail.rdma_device + "/ports/" + std::to_string(rail.rdma_port) + "/";
    // counters/link_downed: the PMA's count of the port's link going down.
    ReadCounter(sys_, port + "counters/link_downed", "counters/link_downed", &sample.counters);
    for (const std::string_view file : nic::FabricHwCounterFiles()) {
      const std::string path = "hw_counters/" + std::string(file);
      ReadCounter(sys_, port + path, path, &sample.counters);
    }
  }
  return sample;
}

}  // namespace rail::probe
