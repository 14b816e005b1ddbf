// roce_congestion_control: DCQCN is broken on one side. rp_cnp_ignored rising: CNPs arrive but
// this host's reaction point does not slow down (RP disabled for the priority);
// np_ecn_marked_roce_packets rising while np_cnp_sent stays flat: ECN-marked packets arrive but
// this host's notification point sends no CNP back (NP disabled). RDMA hw_counters of the port.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {

void CheckRoceCongestionControl(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto& rail : Rails(inputs)) {
    if (rail.link_layer != "Ethernet") continue;
    const auto ignored = HwCounterDelta(inputs, rail.name, "rp_cnp_ignored");
    const auto marked = HwCounterDelta(inputs, rail.name, "np_ecn_marked_roce_packets");
    const auto sent = HwCounterDelta(inputs, rail.name, "np_cnp_sent");
    if (!ignored && !(marked && sent)) continue;
    std::vector<std::string> faults;
    if (ignored && ignored->increase > 0) {
      faults.push_back(fmt::format(
          "rp_cnp_ignored rose by {:.0f} in {}: CNPs arrive but the reaction point is off, so "
          "this host does not slow down when the fabric asks (enable RoCE congestion control "
          "for the RoCE priority, ecn/roce_rp/enable/<p>)",
          ignored->increase, SpanText(ignored->span)));
    }
    if (marked && sent && marked->increase > 0 && sent->increase <= 0) {
      faults.push_back(fmt::format(
          "np_ecn_marked_roce_packets rose by {:.0f} in {} while np_cnp_sent stayed flat: the "
          "notification point is off, so senders are never told to slow down (enable it, "
          "ecn/roce_np/enable/<p>)",
          marked->increase, SpanText(marked->span)));
    }
    out.push_back(Verdict("roce_congestion_control", rail.name, "", Join(faults, "; ")));
  }
}

}  // namespace rail::health::detail
