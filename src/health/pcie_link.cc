// pcie_link: a device whose PCIe link trained below what it and its slot can do (a NIC at x8 or
// Gen3 halves its rail). RDMA devices are judged by current_link_speed and current_link_width
// against the attainable link, one verdict per rail they carry. GPUs are judged by width only from
// sysfs, since a GPU lowers its link speed when idle; their speed counts only as read during a
// current cuda or cuda_host probe (ProbeResult::gpu_link_speed_gts). The GPUs share one host-wide
// verdict (rail ""), naming each degraded GPU in the reason.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"

namespace rail::health::detail {
namespace {

std::string Speed(std::optional<double> gts) {
  return gts ? fmt::format("{:g} GT/s", *gts) : std::string("? GT/s");
}

std::string Width(std::optional<unsigned> width) {
  return width ? fmt::format("x{}", *width) : std::string("x?");
}

bool Below(std::optional<double> current, std::optional<double> attainable) {
  return current && attainable && *current < *attainable;
}

bool Below(std::optional<unsigned> current, std::optional<unsigned> attainable) {
  return current && attainable && *current < *attainable;
}

// "mlx5_5 (0000:a5:00.0) at 32 GT/s x8, can train at 32 GT/s x16: reseat or check the
// slot/riser".
std::string Degraded(const std::string& name, const std::string& pci_bus_id,
                     std::optional<double> speed, std::optional<unsigned> width,
                     const inventory::PciLinkState& state) {
  return fmt::format("{} ({}) at {} {}, can train at {} {}: reseat or check the slot/riser", name,
                     pci_bus_id, Speed(speed), Width(width), Speed(state.attainable_speed_gts),
                     Width(state.attainable_width));
}

std::string DeviceReason(const inventory::RdmaPciDevice& device) {
  const auto& link = device.link.link;
  if (!Below(link.current_speed_gts, device.link.attainable_speed_gts) &&
      !Below(link.current_width, device.link.attainable_width)) {
    return "";
  }
  return Degraded(device.device, device.pci_bus_id, link.current_speed_gts, link.current_width,
                  device.link);
}

void CheckDevices(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto& device : Topology(inputs).devices) {
    const auto reason = DeviceReason(device);
    for (const auto& rail : Rails(inputs)) {
      if (rail.device == device.device) out.push_back(Verdict("pcie_link", rail.name, "", reason));
    }
  }
}

// The link speed the latest current cuda/cuda_host probe on `gpu` read while it moved bytes.
std::optional<double> BusySpeed(const HealthInputs& inputs, const std::string& pci_bus_id) {
  const probe::ProbeResult* latest = nullptr;
  for (const auto& state : Series(inputs)) {
    const auto& result = state.last;
    if (result.memory == gpu::MemoryType::kHost || result.gpu_pci_bus_id != pci_bus_id ||
        !result.gpu_link_speed_gts) {
      continue;
    }
    if (inputs.is_current && !inputs.is_current(state)) continue;
    if (latest == nullptr || result.finished_at > latest->finished_at) latest = &result;
  }
  return latest ? latest->gpu_link_speed_gts : std::nullopt;
}

std::string GpuReason(const HealthInputs& inputs, const inventory::Gpu& gpu) {
  const auto& link = gpu.link.link;
  const auto busy_speed = BusySpeed(inputs, gpu.pci_bus_id);
  if (!Below(busy_speed, gpu.link.attainable_speed_gts) &&
      !Below(link.current_width, gpu.link.attainable_width)) {
    return "";
  }
  if (busy_speed) {
    return Degraded("GPU", gpu.pci_bus_id, busy_speed, link.current_width, gpu.link);
  }
  // Without a busy reading the speed says nothing (an idle GPU lowers it): width only.
  return fmt::format("GPU ({}) at {}, can train at {}: reseat or check the slot/riser",
                     gpu.pci_bus_id, Width(link.current_width), Width(gpu.link.attainable_width));
}

void CheckGpus(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  std::vector<std::string> degraded;
  bool any = false;
  for (const auto& gpu : Topology(inputs).gpus) {
    if (gpu.attach != inventory::GpuAttach::kPcie) continue;  // no PCIe link to the CPU to judge
    any = true;
    if (auto reason = GpuReason(inputs, gpu); !reason.empty())
      degraded.push_back(std::move(reason));
  }
  if (any) out.push_back(Verdict("pcie_link", "", "", Join(degraded, "; ")));
}

}  // namespace

void CheckPcieLinks(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckDevices(inputs, out);
  CheckGpus(inputs, out);
}

}  // namespace rail::health::detail
