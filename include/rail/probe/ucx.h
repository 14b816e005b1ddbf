// The UCX probe kinds. Their mechanics (UcxProbeSide) and their responder half (UcxHandler) are
// private to the probe layer, under src/probe/ucx/.
//
// Every kind sets up one control session per UCP context with the peer's responder
// (responder.h): the initiator creates its side, sends its worker address in probe_setup; the
// responder creates its side over its rail(s) of the same name(s), connects to that address and
// replies with its worker address, packed remote key and buffer; the initiator connects, moves
// data, closes its endpoint politely while the responder still serves (a polite close needs the
// peer's progress), and only then sends probe_done and reads the responder's report.
//
//   ucx_throughput           one rail, one context restricted to its ucx_device; put, get or am
//                            with a window of outstanding operations for params.duration.
//   ucx_rtt                  one rail; tagged ping-pong, one round trip at a time (samples are
//                            round trips, not halves).
//   multirail_capacity       every rail at once, one rail-restricted context and one control
//                            session per rail (the way NCCL drives several NICs); each rail's
//                            throughput under concurrent load, and the aggregate = the rails'
//                            bytes summed / the longest rail's time.
//   ucx_multirail_throughput ONE context over every rail (MAX_RNDV_RAILS and MAX_EAGER_RAILS =
//                            the number of rails) and one control session whose rail field lists
//                            the rails comma-separated; UCX decides the striping. Each rail's
//                            share of the bytes comes from its counters only (result.counters),
//                            and result.per_rail attributes the payload by those shares.
//
// Transports: params.ucx_transports is UCX_TLS; when empty the probes use kUcxDefaultTransports,
// UCX's default minus shared memory: a context restricted to a rail's device still offers
// memory transports, which UCX prefers whenever it thinks the peer shares the host (two agents
// in network namespaces of one machine, as in the lab), and a memory copy says nothing about a
// rail. The responder cannot learn the initiator's UCX_TLS (probe_setup has no field for it) and
// uses the same default; the initiator's worker address only offers its own transports anyway.
//
// Lanes: result.lanes lists the (transport, device) pairs of every endpoint's data lanes; a
// lane's rail is the probed rail whose ucx_device, else whose netdev, is the lane's device (a tcp
// lane on an RDMA rail's netdev is that rail falling back). A rail expecting RDMA goes into
// result.fallback_rails when a lane of that rail, or a lane of no rail, uses a transport that is
// not RDMA (tcp, sysv, posix, cma, ...).
//
// params.timeout ends a probe whatever happens: every control-channel wait gets the deadline, and
// a watchdog cancels UCX operations when it passes (their endpoint is then closed by force);
// context.cancel is honoured likewise. Failures set error_reason (the connect and control tokens
// of client.h, "ucx:<status>", "timeout", "cancelled", "invalid_argument", "invalid_blob",
// "protocol", "no_data", or the peer's refusal such as "setup", "limit", "unknown_kind") and an
// error_message; a probe never throws.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "rail/probe/probe.h"

namespace rail::probe {

inline constexpr const char* kUcxDefaultTransports = "^sm";
// A throughput probe declares this many bytes (the responder's default limit per probe); UCX
// operations are bounded by the duration, not by a byte count.
inline constexpr std::uint64_t kUcxThroughputMaxBytes = std::uint64_t{64} << 30;
// The largest message (and so registered buffer) either side accepts.
inline constexpr std::uint64_t kUcxMaxMessageBytes = std::uint64_t{256} << 20;
inline constexpr std::size_t kUcxRttMaxRoundTrips = 1'000'000;
// How long the responder keeps busy-progressing after the last event before it sleeps on the
// worker's event fd: long enough that a ping-pong or a window refill never waits for a wake-up.
inline constexpr std::chrono::milliseconds kUcxServeBusyUntilIdle{2};

class UcxThroughputProbe final : public Probe {
 public:
  ProbeKind kind() const override { return ProbeKind::kUcxThroughput; }
  ProbeResult Run(const ProbeParams& params, const ProbeContext& context) override;
};

class UcxRttProbe final : public Probe {
 public:
  ProbeKind kind() const override { return ProbeKind::kUcxRtt; }
  ProbeResult Run(const ProbeParams& params, const ProbeContext& context) override;
};

class MultirailCapacityProbe final : public Probe {
 public:
  ProbeKind kind() const override { return ProbeKind::kMultirailCapacity; }
  ProbeResult Run(const ProbeParams& params, const ProbeContext& context) override;
};

class UcxMultirailThroughputProbe final : public Probe {
 public:
  ProbeKind kind() const override { return ProbeKind::kUcxMultirailThroughput; }
  ProbeResult Run(const ProbeParams& params, const ProbeContext& context) override;
};

}  // namespace rail::probe
