#include "rail/sysfs/pci.h"

#include <charconv>
#include <string_view>

#include "rail/sysfs/values.h"
#include "sysfs/read_file.h"

namespace rail::sysfs {
namespace {

using detail::JoinPath;
using detail::Presence;

constexpr std::string_view kPciDevicesDir = "bus/pci/devices";

// "0000:01:00.0": domain, bus, device, function, as the kernel names PCI functions.
bool IsPciAddress(std::string_view name) {
  if (name.size() != 12 || name[4] != ':' || name[7] != ':' || name[10] != '.') return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (i == 4 || i == 7 || i == 10) continue;
    const char c = name[i];
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) return false;
  }
  return true;
}

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// current_link_speed / max_link_speed: "32.0 GT/s PCIe" (5.x and later), "2.5 GT/s" (older
// kernels); "Unknown" when the link is down or the function has no link (integrated devices).
struct LinkSpeed {
  bool known = false;
  double gts = 0;
};
std::optional<LinkSpeed> ParseLinkSpeed(std::string_view text) {
  text = TrimValue(text);
  if (text == "Unknown") return LinkSpeed{};
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  const std::string_view unit = TrimValue(text.substr(static_cast<std::size_t>(end - text.data())));
  if (!unit.starts_with("GT/s")) return std::nullopt;
  return LinkSpeed{true, value};
}

std::optional<double> ReadLinkSpeed(const Filesystem& fs, const std::string& path,
                                    ReadErrors& errors) {
  const auto speed = detail::ReadParsed(fs, path, errors, Presence::kOptional, ParseLinkSpeed);
  if (!speed || !speed->known) return std::nullopt;
  return speed->gts;
}

// current_link_width / max_link_width: "16"; some kernels write 0 or 255 for no link.
std::optional<unsigned> ReadLinkWidth(const Filesystem& fs, const std::string& path,
                                      ReadErrors& errors) {
  const auto width = detail::ReadParsed(fs, path, errors, Presence::kOptional, ParseUnsigned);
  if (!width || *width == 0 || *width > 32) return std::nullopt;
  return static_cast<unsigned>(*width);
}

std::optional<std::uint32_t> ReadHex32(const Filesystem& fs, const std::string& path,
                                       ReadErrors& errors) {
  const auto value = detail::ReadParsed(fs, path, errors, Presence::kRequired, ParseUnsigned);
  if (!value || *value > 0xffffffffu) return std::nullopt;
  return static_cast<std::uint32_t>(*value);
}

// numa_node: "-1" on hosts without NUMA affinity for the function.
std::optional<int> ReadNumaNode(const Filesystem& fs, const std::string& path, ReadErrors& errors) {
  const auto node = detail::ReadParsed(fs, path, errors, Presence::kOptional, ParseSigned);
  if (!node || *node < 0 || *node > 4096) return std::nullopt;
  return static_cast<int>(*node);
}

// Fills root_complex and chain from where bus/pci/devices/<address> resolves:
// devices/pci0000:00/0000:00:01.0/0000:01:00.0. A filesystem without links (a test fake) leaves
// the root unknown and the chain the function alone.
void ReadPlacement(const Filesystem& fs, const std::string& dir, PciFunction& function) {
  function.chain = {function.address};
  std::string resolved;
  if (fs.ResolvePath(dir, &resolved) != 0) return;
  const auto parts = SplitPath(resolved);
  std::size_t i = 0;
  while (i < parts.size() && !(parts[i].starts_with("pci") && i > 0 && parts[i - 1] == "devices")) {
    ++i;
  }
  if (i == parts.size()) return;
  std::vector<std::string> chain;
  for (std::size_t j = i + 1; j < parts.size() && IsPciAddress(parts[j]); ++j) {
    chain.emplace_back(parts[j]);
  }
  if (chain.empty() || chain.back() != function.address) return;
  function.root_complex = std::string(parts[i]);
  function.chain = std::move(chain);
}

PciLink ReadLink(const Filesystem& fs, const std::string& dir, ReadErrors& errors) {
  PciLink link;
  link.current_speed_gts = ReadLinkSpeed(fs, JoinPath(dir, "current_link_speed"), errors);
  link.max_speed_gts = ReadLinkSpeed(fs, JoinPath(dir, "max_link_speed"), errors);
  link.current_width = ReadLinkWidth(fs, JoinPath(dir, "current_link_width"), errors);
  link.max_width = ReadLinkWidth(fs, JoinPath(dir, "max_link_width"), errors);
  return link;
}

void ReadDetails(const Filesystem& fs, const std::string& dir, PciFunction& function,
                 ReadErrors& errors) {
  ReadPlacement(fs, dir, function);
  function.device_id = ReadHex32(fs, JoinPath(dir, "device"), errors);
  function.numa_node = ReadNumaNode(fs, JoinPath(dir, "numa_node"), errors);
  function.link = ReadLink(fs, dir, errors);
}

}  // namespace

bool IsDisplayClass(std::uint32_t class_code) {
  const std::uint32_t class_and_subclass = class_code >> 8;
  return class_and_subclass == 0x0300 || class_and_subclass == 0x0302;
}

std::optional<PciFunction> ReadPciFunction(const Filesystem& fs, const std::string& address,
                                           ReadErrors& errors) {
  const std::string dir = JoinPath(kPciDevicesDir, address);
  if (!fs.IsDirectory(dir)) return std::nullopt;
  PciFunction function;
  function.address = address;
  function.vendor = ReadHex32(fs, JoinPath(dir, "vendor"), errors);
  function.class_code = ReadHex32(fs, JoinPath(dir, "class"), errors);
  ReadDetails(fs, dir, function, errors);
  return function;
}

PciLink ReadPciLink(const Filesystem& fs, const std::string& address, ReadErrors& errors) {
  const std::string dir = JoinPath(kPciDevicesDir, address);
  if (!fs.IsDirectory(dir)) return {};
  return ReadLink(fs, dir, errors);
}

std::vector<PciFunction> ReadPciFunctions(
    const Filesystem& fs, ReadErrors& errors,
    const std::function<bool(std::uint32_t vendor, std::uint32_t class_code)>& want,
    std::optional<std::uint32_t> only_vendor) {
  std::vector<PciFunction> functions;
  // One or two small reads per function for every function on the host (a few hundred on a large
  // one); the rest only for the ones `want` keeps.
  for (const auto& address :
       detail::ListNames(fs, std::string(kPciDevicesDir), errors, Presence::kOptional)) {
    const std::string dir = JoinPath(kPciDevicesDir, address);
    const auto vendor = ReadHex32(fs, JoinPath(dir, "vendor"), errors);
    if (!vendor || (only_vendor && *vendor != *only_vendor)) continue;
    const auto class_code = ReadHex32(fs, JoinPath(dir, "class"), errors);
    if (!class_code || !want(*vendor, *class_code)) continue;
    PciFunction function;
    function.address = address;
    function.vendor = vendor;
    function.class_code = class_code;
    ReadDetails(fs, dir, function, errors);
    functions.push_back(std::move(function));
  }
  return functions;
}

// The link's own target names the function: one readlink, where resolving the whole path cost
// one per component, for every device, every scrape.
std::optional<std::string> ResolvedPciAddress(const Filesystem& fs, const std::string& link) {
  std::string name;
  if (fs.LinkTargetName(link, &name) != 0 || !IsPciAddress(name)) return std::nullopt;
  return name;
}

std::optional<std::string> InfinibandPciAddress(const Filesystem& fs, const std::string& device) {
  return ResolvedPciAddress(fs, JoinPath("class/infiniband", device) + "/device");
}

PeerMemoryState ReadPeerMemoryState(const Filesystem& sys, const Filesystem& proc,
                                    ReadErrors& errors) {
  PeerMemoryState state;
  // MLNX_OFED's peer memory client registers as nv_mem, or nv_mem_nc (no cache coherence).
  for (const char* client :
       {"kernel/mm/memory_peers/nv_mem/version", "kernel/mm/memory_peers/nv_mem_nc/version"}) {
    state.nv_mem_version = detail::ReadString(sys, client, errors, Presence::kOptional);
    if (state.nv_mem_version) break;
  }
  state.nvidia_peermem_loaded = sys.IsDirectory("module/nvidia_peermem");
  state.kernel_release =
      detail::ReadString(proc, "sys/kernel/osrelease", errors, Presence::kOptional);
  if (const auto version =
          detail::ReadText(proc, "driver/nvidia/version", errors, Presence::kOptional)) {
    state.nvidia_open_modules = version->find("Open Kernel Module") != std::string::npos;
  }
  return state;
}

}  // namespace rail::sysfs
