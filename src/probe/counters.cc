#include "rail/probe/counters.h"

#include <algorithm>
#include <utility>

#include "rail/sysfs/values.h"

namespace rail::probe {
namespace {

bool ReadUnsigned(const sysfs::Filesystem& sys, const std::string& path, std::uint64_t* value) {
  std::string text;
  if (sys.ReadFile(path, &text) != 0) return false;
  const auto parsed = sysfs::ParseUnsigned(text);
  if (!parsed) return false;
  *value = *parsed;
  return true;
}

// A counter that went backwards was reset (device reset, driver reload) and counted up from zero
// since, as Prometheus' increase() assumes: what it reads now is what the rail carried since the
// reset, a lower bound of what it carried during the probe. Zero instead would make a rail that
// reset mid-probe look idle, and hand its share of a multi-rail probe to the other rails.
std::uint64_t Delta(std::uint64_t before, std::uint64_t after) {
  return after >= before ? after - before : after;
}

}  // namespace

RailCounterSample RailCounterReader::Read(const ProbeRail& rail) const {
  // The sources in sysfs::PortDataCounterSource's order, read file by file: a probe reads two
  // counters, not the whole device.
  RailCounterSample sample;
  if (!rail.rdma_device.empty()) {
    const std::string device = "class/infiniband/" + rail.rdma_device;
    const std::string port = device + "/ports/" + std::to_string(rail.rdma_port);
    std::uint64_t transmit_words = 0;
    std::uint64_t receive_words = 0;
    // counters/port_{xmit,rcv}_data, else counters_ext/port_{xmit,rcv}_data_64: 4-byte words.
    for (const auto& [directory, suffix] :
         {std::pair{"/counters/", ""}, std::pair{"/counters_ext/", "_64"}}) {
      if (ReadUnsigned(sys_, port + directory + "port_xmit_data" + suffix, &transmit_words) &&
          ReadUnsigned(sys_, port + directory + "port_rcv_data" + suffix, &receive_words)) {
        sample.transmit_bytes = transmit_words * 4;
        sample.receive_bytes = receive_words * 4;
        sample.valid = true;
        return sample;
      }
    }
    // Without PMA only a software device's netdev (rxe, siw: no `device` link) sees its traffic;
    // a NIC's netdev counters leave RDMA out.
    if (sys_.Exists(device + "/device")) return sample;
  }
  if (!rail.netdev.empty()) {
    const std::string statistics = "class/net/" + rail.netdev + "/statistics/";
    sample.valid = ReadUnsigned(sys_, statistics + "tx_bytes", &sample.transmit_bytes) &&
                   ReadUnsigned(sys_, statistics + "rx_bytes", &sample.receive_bytes);
  }
  return sample;
}

RailCounterSnapshot RailCounterReader::Snapshot(const std::vector<ProbeRail>& rails) const {
  RailCounterSnapshot snapshot;
  for (const auto& rail : rails) snapshot[rail.name] = Read(rail);
  return snapshot;
}

std::vector<RailCounterDelta> OtherRailDeltas(const RailCounterSnapshot& before,
                                              const RailCounterSnapshot& after,
                                              const std::vector<std::string>& probed) {
  std::vector<RailCounterDelta> deltas;
  for (const auto& [rail, sample] : after) {
    if (std::find(probed.begin(), probed.end(), rail) != probed.end()) continue;
    const auto b = before.find(rail);
    if (b == before.end() || !b->second.valid || !sample.valid) continue;
    deltas.push_back({rail, Delta(b->second.transmit_bytes, sample.transmit_bytes),
                      Delta(b->second.receive_bytes, sample.receive_bytes), 0});
  }
  return deltas;
}

std::uint64_t OtherRailsTransmitBytes(const ProbeResult& result,
                                      const std::set<std::string>& ours) {
  std::uint64_t bytes = 0;
  for (const RailCounterDelta& delta : result.counters) {
    const bool probed =
        std::find(result.rails.begin(), result.rails.end(), delta.rail) != result.rails.end();
    if (!probed && !ours.contains(delta.rail)) bytes += delta.transmit_bytes;
  }
  return bytes;
}

std::vector<RailCounterDelta> CounterDeltas(const RailCounterSnapshot& before,
                                            const RailCounterSnapshot& after,
                                            const std::vector<std::string>& probed,
                                            std::uint64_t* other_rails_bytes) {
  std::vector<RailCounterDelta> deltas;
  std::uint64_t total = 0;
  for (const auto& rail : probed) {
    const auto b = before.find(rail);
    const auto a = after.find(rail);
    if (b == before.end() || a == after.end() || !b->second.valid || !a->second.valid) continue;
    RailCounterDelta delta;
    delta.rail = rail;
    delta.transmit_bytes = Delta(b->second.transmit_bytes, a->second.transmit_bytes);
    delta.receive_bytes = Delta(b->second.receive_bytes, a->second.receive_bytes);
    total += delta.transmit_bytes;
    deltas.push_back(delta);
  }
  for (auto& delta : deltas) {
    delta.share =
        total == 0 ? 0 : static_cast<double>(delta.transmit_bytes) / static_cast<double>(total);
  }
  if (other_rails_bytes != nullptr) {
    *other_rails_bytes = 0;
    for (const RailCounterDelta& delta : OtherRailDeltas(before, after, probed)) {
      *other_rails_bytes += delta.transmit_bytes;
    }
  }
  return deltas;
}

}  // namespace rail::probe
