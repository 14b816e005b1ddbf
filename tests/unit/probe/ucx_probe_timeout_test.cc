// UCX put probes cut short by their timeout, against an in-process responder: the responder must
// survive them and go on serving. Before the initiator drained its operations on abort, the first
// or second such probe aborted this process in the responder's ucp_put_handler ("Fatal:
// unexpected error: Endpoint timeout"; see UcxProbeSide::DrainAfterAbort).
#include <ostream>

#include "ucx_probe_fixture.h"

namespace rail::probe {
namespace {

using namespace std::chrono_literals;
using testing::UcxProbeTest;
using testing::VethRail;

constexpr int kRounds = 3;

ProbeParams PutCutShort(ProbeParams params) {
  params.operation = UcxOperation::kPut;
  params.message_sizes_bytes = {1 << 20};
  params.duration = 30s;  // never reached: the timeout ends every run while puts are posted
  params.timeout = 700ms;
  return params;
}

TEST_F(UcxProbeTest, PutProbesCutShortByTheirTimeoutLeaveTheResponderServing) {
  const std::vector<ProbeRail> one_rail = {VethRail(0, 'a')};
  const std::vector<ProbeRail> two_rails = {VethRail(0, 'a'), VethRail(1, 'a')};
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    for (const auto& [kind, rails] : {std::pair{ProbeKind::kUcxThroughput, one_rail},
                                      std::pair{ProbeKind::kMultirailCapacity, two_rails},
                                      std::pair{ProbeKind::kUcxMultirailThroughput, two_rails}}) {
      const ProbeResult result = Run(PutCutShort(Params(kind, rails)));
      EXPECT_FALSE(result.success) << ProbeKindName(kind);
      // multirail_capacity may end a rail whose timed phase the deadline left no time for as
      // "no_data"; either way the run failed with a reason instead of a dead peer.
      EXPECT_TRUE(result.error_reason == "timeout" || result.error_reason == "no_data")
          << ProbeKindName(kind) << ": " << result.error_reason << ": " << result.error_message;
    }
  }
  // The responder is alive and still serves a complete probe.
  ProbeParams params = Params(ProbeKind::kUcxThroughput);
  params.operation = UcxOperation::kPut;
  const ProbeResult result = Run(params);
  EXPECT_TRUE(result.success) << result.error_reason << ": " << result.error_message;
  EXPECT_GT(result.bytes, 0u);
}

}  // namespace
}  // namespace rail::probe
