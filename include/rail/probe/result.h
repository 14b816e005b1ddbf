// What a probe is asked to do and what it reports. Every probe kind takes a ProbeParams and
// returns a ProbeResult; the store, the collector, the CLI table and the health checks only ever
// see these structs.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rail/gpu/memory.h"
#include "rail/nic/fabric_counters.h"
#include "rail/probe/spread.h"
#include "rail/probe/stats.h"

namespace rail::probe {

enum class ProbeKind {
  kUcxThroughput,           // one rail, one rail-restricted UCP context
  kUcxRtt,                  // one rail, ping-pong
  kMultirailCapacity,       // every rail at once, one rail-restricted context each
  kUcxMultirailThroughput,  // one context over every rail, UCX stripes (MAX_RNDV_RAILS)
  kTcpThroughput,           // TCP streams bound to a netdev or bond
  kTcpRtt,                  // TCP ping-pong
};
const char* ProbeKindName(ProbeKind kind);  // "ucx_throughput", ...
std::optional<ProbeKind> ParseProbeKind(const std::string& name);
// Bulk kinds move many bytes and occupy their rails; the others are latency probes.
bool IsBulk(ProbeKind kind);
// Multi-rail kinds run over all their rails at once; the others once per rail.
bool IsMultiRail(ProbeKind kind);
// The kinds whose buffers may be GPU memory (ProbeParams::memory); the others move host memory.
bool TakesMemoryType(ProbeKind kind);

enum class UcxOperation { kPut, kGet, kAm };
const char* UcxOperationName(UcxOperation operation);  // "put", "get", "am"
std::optional<UcxOperation> ParseUcxOperation(const std::string& name);

// A local rail as a probe needs it.
struct ProbeRail {
  std::string name;         // the `rail` label; peers name their rails alike
  std::string ucx_device;   // UCX_NET_DEVICES entry: "mlx5_0:1" for RDMA, the netdev for TCP
  std::string netdev;       // for TCP binding and netdev counters
  std::string ipv4;         // local address on the rail
  std::string rdma_device;  // "" for netdev-only rails
  unsigned rdma_port = 0;
  bool expect_rdma = true;  // a TCP lane on this rail is a fallback
  // The rail's line rate, bytes per second: its port's rate, else the configured expectation
  // (inventory::LineRate); nullopt when neither is known (a veth's nominal speed means nothing).
  std::optional<double> line_rate;
};

// The rails' names, in their order.
std::vector<std::string> RailNames(const std::vector<ProbeRail>& rails);

struct ProbeParams {
  ProbeKind kind = ProbeKind::kUcxThroughput;
  std::string peer;              // host[:port] of the peer agent's responder
  std::vector<ProbeRail> rails;  // one for single-rail kinds, every rail for multi-rail kinds
  UcxOperation operation = UcxOperation::kPut;
  std::vector<std::uint64_t> message_sizes_bytes = {1 << 20};
  unsigned window = 16;  // outstanding operations
  unsigned streams = 1;  // TCP streams (iperf3 -P)
  std::chrono::milliseconds duration{2000};
  std::chrono::milliseconds timeout{15000};  // always ends the probe, whatever happens
  std::string ucx_transports;                // UCX_TLS; empty: UCX's default
  // Buffers on both sides (ucx_throughput, multirail_capacity, ucx_multirail_throughput): host,
  // or cuda / cuda_host on the GPU nearest each rail (like nixlbench's --initiator_seg_type and
  // --target_seg_type VRAM).
  gpu::MemoryType memory = gpu::MemoryType::kHost;
};

// Bytes a rail's counters saw during a probe, against what the probe expected of it.
struct RailCounterDelta {
  std::string rail;
  std::uint64_t transmit_bytes = 0;  // port_xmit_data (x4) or netdev statistics/tx_bytes delta
  std::uint64_t receive_bytes = 0;
  double share = 0;  // of the bytes transmitted on all probed rails
};

// What a probed rail's NIC, netdev and RDMA port counted of the fabric during one run: how much
// each evidence counter (fabric_evidence.h) rose from the run's start to its end. A counter read
// at only one end, or one that went backwards (a reset), is left out: absent, never 0.
struct RailFabricEvidence {
  std::string rail;
  double seconds = 0;  // between the two readings
  // The rail's netdev (a bond's slaves, each) as its NIC driver's allow-list maps it
  // (nic::FabricReading; each sample's value is its rise); netdevs of other drivers are left out.
  std::vector<nic::FabricReading> nic;
  // Rises of the sysfs counters, by their path below the RDMA port ("hw_counters/out_of_sequence",
  // "counters/link_downed") or the netdev ("carrier_down_count").
  std::map<std::string, std::uint64_t> counters;
  // Whether any counter was read at both ends: without, nothing is known of the fabric.
  bool Read() const { return !nic.empty() || !counters.empty(); }
};

struct RailThroughput {
  std::string rail;
  double bytes_per_second = 0;
  std::uint64_t bytes = 0;
};

struct TransportLane {
  std::string transport;  // "tcp", "rc_mlx5", ...
  std::string device;     // "ra0", "mlx5_0:1"
  std::string rail;       // the local rail owning `device`, "" when none does
};

// An invariant a run's figures broke (figures.h): its token and what broke it, for people.
struct FigureProblem {
  std::string invariant;
  std::string message;
  auto operator<=>(const FigureProblem&) const = default;
};

struct ProbeResult {
  ProbeKind kind = ProbeKind::kUcxThroughput;
  std::string peer;
  std::vector<std::string> rails;
  bool success = false;
  std::string error_reason;   // stable token: timeout, refused, auth, limit, ucx:<status>, ...
  std::string error_message;  // for people
  // error_reason "busy": the responder was serving another bulk run and will admit this one
  // after about this long (its hint; 0 when it gave none). Not a failure of the rail: the
  // agent retries and counts it apart (IsBusy). Also the hint of a "rate" refusal.
  std::chrono::milliseconds retry_after{0};
  std::chrono::system_clock::time_point finished_at;
  double seconds = 0;       // time spent moving data
  std::uint64_t bytes = 0;  // payload bytes moved
  // tcp_throughput: bytes the sender's send() calls accepted; `bytes` is the receiver's count.
  std::uint64_t bytes_sent = 0;
  double throughput_bytes_per_second = 0;
  std::uint64_t message_size_bytes = 0;
  unsigned streams = 0;  // tcp_throughput: parallel TCP streams; 0 for the other kinds
  std::vector<RailThroughput> per_rail;  // multi-rail kinds
  // Bulk kinds: the spread of the timed phase's interval rates (a multi-rail capacity run's:
  // of the rails' summed rates); nullopt with fewer than two whole intervals.
  std::optional<RateSpread> spread;
  // The invariants the run's figures broke (CheckRunFigures, filled by the runner): while any,
  // its throughput and latency are not published and no check judges them.
  std::vector<FigureProblem> withheld;
  std::vector<double> rtt_samples_seconds;  // round trips
  std::optional<LatencySummary> rtt;        // round trip summary
  std::vector<TransportLane> lanes;         // UCX kinds: lanes of the endpoint(s)
  std::vector<std::string> fallback_rails;  // rails expected to use RDMA that used TCP
  std::vector<RailCounterDelta> counters;   // counter cross-check
  std::uint64_t bytes_on_other_rails = 0;   // counted on rails the probe did not use
  // Each probed rail's fabric evidence, when the run had a counter reader.
  std::vector<RailFabricEvidence> fabric;
  double local_cpu_seconds = 0;
  std::optional<double> peer_cpu_seconds;
  std::string peer_agent_version;
  std::string peer_ucx_version;
  std::string peer_name;  // the name the peer's responder gave in its welcome (may be empty)
  // MTU of each of the peer's rails (by rail name) as its responder reported them in the
  // welcome; empty when the peer predates the field or could not read them.
  std::map<std::string, std::uint64_t> peer_rail_mtus;
  // The memory the buffers were (params.memory) and what really moved the bytes, from the lanes
  // UCX reported, not from what was asked: "host"; "gpu_direct" (the NIC read GPU memory);
  // "cuda_copy" (UCX staged through its own pinned buffers); "staged" (UCX took host memory
  // only, so the probe copied through pinned host memory itself, as cuda_copy would).
  gpu::MemoryType memory = gpu::MemoryType::kHost;
  std::string memory_path = "host";
  // cuda and cuda_host runs: the GPU used (nearest the rail) and its link speed read during the
  // transfer (current_link_speed: a GPU lowers it when idle, so only a busy reading counts).
  std::string gpu_pci_bus_id;
  std::optional<double> gpu_link_speed_gts;
};

// Striping of a multi-rail UCX run: the counter delta of the probed rail that carried the highest
// share of the bytes (RailCounterDelta::share). nullopt unless the run is
// ucx_multirail_throughput and the counters saw at least two of its rails. The multirail_striping
// health check judges by it (health::Thresholds::multirail_max_rail_share).
std::optional<RailCounterDelta> BusiestProbedRail(const ProbeResult& result);

// The error reason of a run the responder refused because another bulk run held it.
inline constexpr const char* kBusyReason = "busy";
// Whether `result` is such a refusal: nothing was measured, and nothing is wrong with the rail.
bool IsBusy(const ProbeResult& result);
// The error reason of a run the peer's per-peer rate limit refused; it says when to come back
// (ProbeResult::retry_after).
inline constexpr const char* kRateReason = "rate";
// The error reason of a run the peer ended because its responder was stopping (its `shutdown`
// refusal): what the transfer saw of that stop follows from it.
inline constexpr const char* kPeerShutdownReason = "shutdown";
// Whether `result` is a failed run of its series' rails and peer: a failure that is neither a
// busy refusal, nor a run the agent cancelled ("cancelled": stop, reload, new plan), nor a run
// that never started because no probe worker ran ("worker_unavailable": the worker was
// restarting). ResultStore counts these in a row (SeriesState::consecutive_failures) and the
// probe_failing check judges by that count.
bool CountsAsFailedRun(const ProbeResult& result);

}  // namespace rail::probe
