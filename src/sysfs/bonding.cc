#include <utility>

#include "rail/sysfs/netclass.h"
#include "rail/sysfs/values.h"
#include "sysfs/read_file.h"

namespace rail::sysfs {
namespace {

using detail::JoinPath;
using detail::Presence;

constexpr std::string_view kBondNetClassDir = "class/net";

// bonding_masters and bonding/slaves are one line of space-separated names.
std::vector<std::string> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = text.find_first_not_of(" \t\r\n", pos);
    if (start == std::string_view::npos) break;
    std::size_t end = text.find_first_of(" \t\r\n", start);
    if (end == std::string_view::npos) end = text.size();
    words.emplace_back(text.substr(start, end - start));
    pos = end;
  }
  return words;
}

template <typename T>
void FillFrom(std::optional<T>& target, const std::optional<T>& fallback) {
  if (!target && fallback) target = fallback;
}

// On current kernels lower_<slave> is a symlink to the slave's own directory; before 4.x the
// bond held slave_<slave> instead. The slave's directory itself is the last resort.
std::optional<std::string> SlaveAttributeDir(const Filesystem& sys, const std::string& bond_dir,
                                             const std::string& slave) {
  for (const std::string& candidate :
       {JoinPath(bond_dir, "lower_" + slave), JoinPath(bond_dir, "slave_" + slave),
        JoinPath(kBondNetClassDir, slave)}) {
    std::string dir = JoinPath(candidate, "bonding_slave");
    if (sys.IsDirectory(dir)) return dir;
  }
  return std::nullopt;
}

BondSlave ReadSlave(const Filesystem& sys, const std::string& bond_dir, const std::string& name,
                    const ProcBondSlave* proc, ReadErrors& errors) {
  BondSlave slave;
  slave.name = name;
  if (auto dir = SlaveAttributeDir(sys, bond_dir, name)) {
    auto read_string = [&](std::string_view file) {
      return detail::ReadString(sys, JoinPath(*dir, file), errors, Presence::kOptional);
    };
    auto read_unsigned = [&](std::string_view file) {
      return detail::ReadParsed(sys, JoinPath(*dir, file), errors, Presence::kOptional,
                                ParseUnsigned);
    };
    slave.state = read_string("state");
    slave.mii_status = read_string("mii_status");
    slave.link_failure_count = read_unsigned("link_failure_count");
    slave.perm_hwaddr = read_string("perm_hwaddr");
    slave.queue_id = read_unsigned("queue_id");
    // Only 802.3ad bonds have aggregators.
    slave.ad_aggregator_id = read_unsigned("ad_aggregator_id");
  }
  if (proc != nullptr) {
    slave.proc_speed = proc->speed;
    slave.proc_duplex = proc->duplex;
    FillFrom(slave.mii_status, proc->mii_status);
    FillFrom(slave.link_failure_count, proc->link_failure_count);
    FillFrom(slave.perm_hwaddr, proc->permanent_hw_addr);
  }
  return slave;
}

Bond ReadBond(const Filesystem& sys, const Filesystem& proc, const std::string& name,
              ReadErrors& errors) {
  const std::string bond_dir = JoinPath(kBondNetClassDir, name);
  const std::string attr_dir = JoinPath(bond_dir, "bonding");
  auto read_string = [&](std::string_view file) {
    return detail::ReadString(sys, JoinPath(attr_dir, file), errors, Presence::kOptional);
  };

  Bond bond;
  bond.name = name;
  bond.mode = read_string("mode");
  bond.xmit_hash_policy = read_string("xmit_hash_policy");
  bond.mii_status = read_string("mii_status");
  bond.active_slave = read_string("active_slave");
  bond.miimon_ms = detail::ReadParsed(sys, JoinPath(attr_dir, "miimon"), errors,
                                      Presence::kOptional, ParseUnsigned);
  auto slaves_text =
      detail::ReadText(sys, JoinPath(attr_dir, "slaves"), errors, Presence::kOptional);

  // The proc text is the only source of per-slave speed and duplex; its other fields stand in
  // for sysfs attributes that are missing (they keep the proc spelling, e.g. "load balancing
  // (xor)" rather than "balance-xor 2").
  std::optional<ProcBond> proc_bond;
  if (auto text =
          detail::ReadText(proc, JoinPath("net/bonding", name), errors, Presence::kOptional)) {
    proc_bond = ParseProcBonding(*text);
    FillFrom(bond.mode, proc_bond->mode);
    FillFrom(bond.xmit_hash_policy, proc_bond->xmit_hash_policy);
    FillFrom(bond.mii_status, proc_bond->mii_status);
    FillFrom(bond.active_slave, proc_bond->active_slave);
  }

  std::vector<std::string> slave_names;
  if (slaves_text) {
    slave_names = SplitWords(*slaves_text);
  } else if (proc_bond) {
    for (const ProcBondSlave& slave : proc_bond->slaves) slave_names.push_back(slave.name);
  }
  for (const std::string& slave_name : slave_names) {
    const ProcBondSlave* proc_slave = nullptr;
    if (proc_bond) {
      for (const ProcBondSlave& candidate : proc_bond->slaves) {
        if (candidate.name == slave_name) proc_slave = &candidate;
      }
    }
    bond.slaves.push_back(ReadSlave(sys, bond_dir, slave_name, proc_slave, errors));
  }
  return bond;
}

}  // namespace

ProcBond ParseProcBonding(std::string_view text) {
  ProcBond bond;
  ProcBondSlave* slave = nullptr;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);

    // Split at the first colon only: "Permanent HW addr: 30:c5:99:3e:6a:10".
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = TrimValue(line.substr(0, colon));
    const std::string value(TrimValue(line.substr(colon + 1)));

    if (key == "Slave Interface") {
      bond.slaves.push_back(ProcBondSlave{});
      slave = &bond.slaves.back();
      slave->name = value;
    } else if (slave == nullptr) {
      if (key == "Bonding Mode") {
        bond.mode = value;
      } else if (key == "Transmit Hash Policy") {
        bond.xmit_hash_policy = value;
      } else if (key == "MII Status") {
        bond.mii_status = value;
      } else if (key == "Currently Active Slave") {
        bond.active_slave = value;
      }
    } else if (key == "MII Status") {
      slave->mii_status = value;
    } else if (key == "Speed") {
      slave->speed = value;
    } else if (key == "Duplex") {
      slave->duplex = value;
    } else if (key == "Link Failure Count") {
      slave->link_failure_count = ParseUnsigned(value);
    } else if (key == "Permanent HW addr") {
      slave->permanent_hw_addr = value;
    }
  }
  return bond;
}

std::vector<Bond> ReadBonds(const Filesystem& sys, const Filesystem& proc, ReadErrors& errors) {
  // No bonding_masters means the bonding module is not loaded: no bonds, nothing wrong.
  auto masters = detail::ReadText(sys, JoinPath(kBondNetClassDir, "bonding_masters"), errors,
                                  Presence::kOptional);
  std::vector<Bond> bonds;
  if (!masters) return bonds;
  for (const std::string& name : SplitWords(*masters)) {
    bonds.push_back(ReadBond(sys, proc, name, errors));
  }
  return bonds;
}

}  // namespace rail::sysfs
