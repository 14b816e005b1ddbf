// The lanes of a UCX endpoint as a probe reports them: each lane's rail, and which rails fell
// back from RDMA.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rail/probe/result.h"

namespace rail::probe::detail {

// RDMA transports: rc_*, dc_*, ud_*, gga_*, ugni_* (and the bare aliases rc, dc, ud).
bool IsRdmaTransport(std::string_view transport);

// (transport, device) pairs as TransportLanes whose rail is the rail of `rails` whose ucx_device,
// else whose netdev, equals the device ("" when none does).
std::vector<TransportLane> MapLanes(const std::vector<std::pair<std::string, std::string>>& pairs,
                                    const std::vector<ProbeRail>& rails);

// Adds to result->fallback_rails (once each) every rail of `rails` that expects RDMA while a lane
// of that rail, or a lane of no rail, uses a transport that is not RDMA.
void AddFallbackRails(const std::vector<TransportLane>& lanes, const std::vector<ProbeRail>& rails,
                      ProbeResult* result);

}  // namespace rail::probe::detail
