// roce_congestion_control: DCQCN is broken on one side. rp_cnp_ignored rising: CNPs arrive but
// this host's reaction point does not slow down (RP disabled for the priority);
// np_ecn_marked_roce_packets rising while np_cnp_sent stays flat: ECN-marked packets arrive but
// this host's notification point sends no CNP back (NP disabled). RDMA hw_counters of the port.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {

Findings CongestionControlFindings(const RailRises& rises, const Thresholds&) {
  const auto ignored = rises.HwCounter("rp_cnp_ignored");
  const auto marked = rises.HwCounter("np_ecn_marked_roce_packets");
  const auto sent = rises.HwCounter("np_cnp_sent");
  Findings found;
  found.judged = ignored || (marked && sent);
  if (ignored && ignored->increase > 0) {
    found.faults.push_back(fmt::format(
        "rp_cnp_ignored rose by {:.0f} in {}: CNPs arrive but the reaction point is off, so "
        "this host does not slow down when the fabric asks (enable RoCE congestion control "
        "for the RoCE priority, ecn/roce_rp/enable/<p>)",
        ignored->increase, rises.Span(*ignored)));
  }
  if (marked && sent && marked->increase > 0 && sent->increase <= 0) {
    found.faults.push_back(fmt::format(
        "np_ecn_marked_roce_packets rose by {:.0f} in {} while np_cnp_sent stayed flat: the "
        "notification point is off, so senders are never told to slow down (enable it, "
        "ecn/roce_np/enable/<p>)",
        marked->increase, rises.Span(*marked)));
  }
  return found;
}

void CheckRoceCongestionControl(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckWindowed(
      inputs, "roce_congestion_control", CongestionControlFindings,
      [](const std::string& faults) { return faults; }, out, /*ethernet_only=*/true);
}

}  // namespace rail::health::detail
