// /proc/net/bonding/<bond>, the text the bonding driver prints (rail::sysfs::ParseProcBonding).
//
// Invariant: what the parser found, printed back in the driver's "Key: value" lines, parses to
// the same thing; values have no surrounding blanks. The parser does not throw.
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "rail/sysfs/netclass.h"
#include "rail/sysfs/values.h"

namespace {

using rail::sysfs::ProcBond;
using rail::sysfs::ProcBondSlave;

void Line(std::string* out, const char* key, const std::optional<std::string>& value) {
  if (value) *out += std::string(key) + ": " + *value + "\n";
}

std::string Print(const ProcBond& bond) {
  std::string out;
  Line(&out, "Bonding Mode", bond.mode);
  Line(&out, "Transmit Hash Policy", bond.xmit_hash_policy);
  Line(&out, "MII Status", bond.mii_status);
  Line(&out, "Currently Active Slave", bond.active_slave);
  for (const ProcBondSlave& slave : bond.slaves) {
    out += "\nSlave Interface: " + slave.name + "\n";
    Line(&out, "MII Status", slave.mii_status);
    Line(&out, "Speed", slave.speed);
    Line(&out, "Duplex", slave.duplex);
    if (slave.link_failure_count) {
      out += "Link Failure Count: " + std::to_string(*slave.link_failure_count) + "\n";
    }
    Line(&out, "Permanent HW addr", slave.permanent_hw_addr);
  }
  return out;
}

bool Trimmed(const std::optional<std::string>& value) {
  return !value || rail::sysfs::TrimValue(*value) == *value;
}

bool Same(const ProcBond& a, const ProcBond& b) {
  if (a.mode != b.mode || a.xmit_hash_policy != b.xmit_hash_policy ||
      a.mii_status != b.mii_status || a.active_slave != b.active_slave ||
      a.slaves.size() != b.slaves.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.slaves.size(); ++i) {
    const ProcBondSlave& x = a.slaves[i];
    const ProcBondSlave& y = b.slaves[i];
    if (x.name != y.name || x.mii_status != y.mii_status || x.speed != y.speed ||
        x.duplex != y.duplex || x.link_failure_count != y.link_failure_count ||
        x.permanent_hw_addr != y.permanent_hw_addr) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ProcBond bond = rail::sysfs::ParseProcBonding(rail::fuzz::AsText(data, size));
  FUZZ_CHECK(Trimmed(bond.mode) && Trimmed(bond.xmit_hash_policy) && Trimmed(bond.mii_status) &&
                 Trimmed(bond.active_slave),
             "bond values have no surrounding blanks");
  for (const ProcBondSlave& slave : bond.slaves) {
    FUZZ_CHECK(Trimmed(slave.name) && Trimmed(slave.mii_status) && Trimmed(slave.speed) &&
                   Trimmed(slave.duplex) && Trimmed(slave.permanent_hw_addr),
               "slave values have no surrounding blanks");
  }
  FUZZ_CHECK(Same(rail::sysfs::ParseProcBonding(Print(bond)), bond),
             "the parsed bond, printed back, parses the same");
  return 0;
}
