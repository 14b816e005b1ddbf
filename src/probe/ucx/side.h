// One side of a UCX probe (context, worker, registered buffer, endpoint to the peer) and the
// operations that move data between two sides. Nothing here knows about the control channel: a
// side hands out opaque blobs (worker address, packed remote key) that the caller carries to the
// peer by whatever means, and accepts the peer's blobs in return.
//
// The same code drives every transport UCX selects (tcp on lab veths, rc_mlx5 on a ConnectX
// port); which devices and transports a side may use is only ever restricted through its
// UcxContextSpec, never by branching on the transport.
//
// Threads: see worker.h. A side may be handed from one thread to another but must never be used
// by two threads at once; Wake() is the one exception.
//
// The side's parts live beside this file: context.h, worker.h, memory.h, endpoint.h,
// requests.h; its operations in throughput.cc (initiator), rtt.cc (initiator), responder.cc and
// abort.cc (what follows an aborted operation).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "probe/ucx/context.h"
#include "probe/ucx/endpoint.h"
#include "probe/ucx/memory.h"
#include "probe/ucx/progress_worker.h"
#include "probe/ucx/requests.h"
#include "rail/gpu/memory.h"
#include "rail/probe/probe.h"
#include "rail/probe/result.h"
#include "rail/probe/spread.h"

namespace rail::probe {

struct ThroughputOutcome {
  std::uint64_t bytes = 0;  // payload bytes of the operations that completed in the timed phase
  // The timed phase's first post to the completion of all and the final flush, or to the end of
  // the drain's time limit when operations were still outstanding then.
  double seconds = 0;
  std::uint64_t operations = 0;  // completed operations
  // The timed phase's completions over time, for the run's spread.
  IntervalRecorder intervals;
  std::string error_reason;  // "" on success; "ucx:<status>", "timeout", "cancelled", ...
  std::string error_message;
  // On success, what limited the run by time rather than by its operations (a warm-up or drain
  // that reached its limit, a window made smaller for a slow rail); "" when nothing did.
  std::string note;
  bool ok() const { return error_reason.empty(); }
  double bytes_per_second() const { return seconds > 0 ? static_cast<double>(bytes) / seconds : 0; }
};

struct RttOutcome {
  std::vector<double> samples_seconds;  // round trips, not halves
  std::string error_reason;             // as for ThroughputOutcome; samples taken before an
  std::string error_message;            // error are kept
  bool ok() const { return error_reason.empty(); }
};

// What a responder did while serving, for the peer's report and for tests.
struct ServeCounters {
  std::uint64_t pings_echoed = 0;
  std::uint64_t am_messages = 0;
  std::uint64_t am_bytes = 0;
  std::uint64_t errors = 0;  // failed echoes or AM receives
  std::string last_error;    // "ucx:<status>" of the latest error
};

// The memory of a side's buffer (ProbeParams::memory) and the GPU it lives on.
struct SideMemory {
  gpu::MemoryType type = gpu::MemoryType::kHost;
  gpu::DeviceContext* gpu = nullptr;  // required for kCuda and kCudaHost; must outlive the side
};

// How fast a staging side copies between its device buffer and its pinned host buffer, in
// message-sized copies (the responder's share of a staged run, which it cannot time per message:
// an RDMA put lands without its CPU).
struct StagingCopyRates {
  double to_device_bytes_per_second = 0;
  double to_host_bytes_per_second = 0;
  std::string error;  // the driver's message when a copy failed
};

class UcxProbeSide {
 public:
  // Creates the context (features RMA|TAG|AM|WAKEUP, restricted by `spec`), one worker and a
  // registered buffer of `buffer_bytes`. On failure returns nullptr and sets the reason token
  // ("ucx:<status>", "invalid_argument") and a message naming what failed (either may be null).
  // The buffer is `memory`'s: host memory UCX allocates; pinned host memory (kCudaHost)
  // registered as host memory; device memory (kCuda) registered as CUDA memory where UCX takes
  // it, else staged: a pinned host buffer is what UCX moves, and the side copies each message
  // between it and the device buffer (the copies inside the timed loop), as UCX's cuda_copy
  // would. The reason is "cuda" when the driver refused an allocation.
  static std::unique_ptr<UcxProbeSide> Create(const UcxContextSpec& spec, std::size_t buffer_bytes,
                                              std::string* error_reason, std::string* error_message,
                                              const SideMemory& memory = {});
  ~UcxProbeSide();
  // Multi-device sides leaked by the quarantine (see AbortEndpoint), since the process started.
  static int QuarantinedSides();
  static constexpr int kMaxQuarantinedSides = 4;
  UcxProbeSide(const UcxProbeSide&) = delete;
  UcxProbeSide& operator=(const UcxProbeSide&) = delete;

  gpu::MemoryType memory_type() const { return memory_type_; }
  // Device memory moved through a pinned host buffer by this side's own copies.
  bool staged() const { return staged_; }
  // Copies message-sized chunks of a staging side's buffers each way for a bounded time; zero
  // rates for a side that does not stage.
  StagingCopyRates MeasureStagingCopies(std::size_t message_bytes);
  static constexpr std::chrono::milliseconds kStagingSampleTime{200};

  // Blobs for the peer, framed (blob.h).
  const std::string& WorkerAddress() const { return worker_.AddressBlob(); }
  const std::string& PackedRkey() const { return buffer_.PackedKeyBlob(); }
  std::uint64_t BufferAddress() const { return buffer_.address(); }
  std::size_t BufferBytes() const { return buffer_.bytes(); }
  const UcxContextSpec& spec() const { return spec_; }

  // Creates the endpoint to the peer's worker (error handling mode PEER, so a dead peer becomes
  // an error instead of a hang). Both sides connect to each other, as ucx_perftest does: the
  // responder's endpoint carries the RTT echoes. Does not wait for the peer: wire-up completes
  // during the first operation. Replaces any previous endpoint.
  bool Connect(const std::string& remote_worker_address, std::string* error_reason,
               std::string* error_message);
  // Closes the endpoint; a no-op when not connected. kFlush completes what is outstanding and
  // says goodbye to the peer, which needs the peer's worker to progress (or to be gone): without
  // it the close takes all of `limit`. So the initiator disconnects while the responder still
  // serves; the responder, told by the control channel that the initiator is done, uses kForce
  // (instant; the peer, in error mode PEER, at most sees an endpoint error). The destructor
  // closes like kFlush (kForce after an endpoint error).
  enum class CloseMode { kFlush, kForce };
  void Disconnect(CloseMode mode = CloseMode::kFlush,
                  std::chrono::nanoseconds limit = UcxEndpoint::kDefaultCloseLimit);
  bool connected() const { return static_cast<bool>(endpoint_); }
  // The peer's registered buffer, for put and get. Needs Connect first (a remote key belongs to
  // an endpoint). `remote_bytes` bounds the message size of RMA operations.
  bool SetRemoteMemory(const std::string& packed_rkey, std::uint64_t remote_address,
                       std::size_t remote_bytes, std::string* error_reason,
                       std::string* error_message);

  // ---- initiator: the calling thread busy-progresses while data moves, like ucx_perftest ----

  // Keeps `window` operations of `message_bytes` outstanding for `duration` (after an untimed
  // warm-up round that completes the wire-up), then waits for all and flushes the endpoint.
  // Bounded by time on any rail speed: the warm-up and the drain each take at most
  // PhaseLimit(duration); a warm-up that reaches it leaves its operations in flight (the timed
  // phase counts what completes during it), and the window shrinks to what the rail completes
  // in such a limit, so that a slow rail's drain fits its limit. A drain that still
  // reaches it ends the measurement there: the result is the operations completed by then over
  // the time used, and the rest are cancelled (AbortEndpoint) without failing the run.
  //   kPut: ucp_put_nbx from the local buffer into the remote buffer.
  //   kGet: ucp_get_nbx from the remote buffer into the local buffer.
  //   kAm:  ucp_am_send_nbx of the local buffer; from kAmRendezvousFromBytes on with
  //         UCP_AM_SEND_FLAG_RNDV (the rendezvous data path an application's large messages take);
  //         the responder receives into its buffer.
  // UCX 1.13's tcp transport offers no RMA lanes, so over tcp UCX emulates put and get with
  // active messages that the responder's Serve must progress; RDMA transports leave the
  // responder's CPU out of put and get.
  // Draining and flushing are bounded by drain_timeout() ("timeout"); `cancel` (may be null) is
  // polled ("cancelled"). After such an abort the side first lets what it posted drain into the
  // peer (see DrainAfterAbort), then closes the endpoint by force (the only way UCX completes
  // requests still outstanding): Connect and SetRemoteMemory again before reuse.
  ThroughputOutcome RunThroughput(UcxOperation operation, std::size_t message_bytes,
                                  unsigned window, std::chrono::nanoseconds duration,
                                  const std::atomic<bool>* cancel);
  static constexpr std::size_t kAmRendezvousFromBytes = 16 * 1024;
  // RunThroughput's warm-up alone, bounded by PhaseLimit(duration): multirail_capacity completes
  // every rail's wire-up with it before the rails' timed phases start together. Operations still
  // in flight at the limit stay in flight and count in the RunThroughput that follows; an error
  // aborts as RunThroughput does.
  ThroughputOutcome WarmUpOnly(UcxOperation operation, std::size_t message_bytes, unsigned window,
                               std::chrono::nanoseconds duration, const std::atomic<bool>* cancel);

  // Ping-pong of tagged messages of `message_bytes` each way (the responder echoes the size it
  // received), timed one round trip at a time with steady_clock, until `duration` has passed or
  // `max_samples` were taken. Each round trip is bounded by drain_timeout().
  RttOutcome RunRtt(std::size_t message_bytes, std::chrono::nanoseconds duration,
                    std::size_t max_samples, const std::atomic<bool>* cancel);

  // The most time a bulk run's warm-up, and its drain after posting stops, may take: a share of
  // its duration, at least kMinPhaseLimit, at most drain_timeout().
  std::chrono::nanoseconds PhaseLimit(std::chrono::nanoseconds duration) const;
  static constexpr double kPhaseLimitShareOfDuration = 0.5;
  static constexpr std::chrono::milliseconds kMinPhaseLimit{250};

  // Bounds each round trip, and the warm-up and drain of a bulk run (PhaseLimit). 10 s by
  // default: generous for a healthy rail, short enough that a dead one ends the probe.
  void set_drain_timeout(std::chrono::nanoseconds timeout) { drain_timeout_ = timeout; }
  std::chrono::nanoseconds drain_timeout() const { return drain_timeout_; }
  // After an abort, before the endpoint closes, what was posted drains into the peer (see
  // DrainAfterAbort) for at most kAbortDrainLimit, and only while operations keep completing at
  // least every kAbortDrainIdle: an abort may outlast the probe's deadline by that much.
  static constexpr std::chrono::milliseconds kAbortDrainIdle{1000};
  static constexpr std::chrono::milliseconds kAbortDrainLimit{5000};

  // ---- responder ----

  // Echoes RTT pings, receives AM data and progresses RMA targeted at this side (software
  // transports such as tcp need the target to make progress) until `stop` is set. While traffic
  // flows it busy-progresses, and keeps doing so for `busy_until_idle` after the last event (a
  // probe's next message usually follows within microseconds, and sleeping in between would add
  // a wake-up to every round trip); after that it arms the worker and sleeps in poll() on the
  // worker's event fd with a short timeout, so an idle responder costs no CPU and still notices
  // `stop` within kIdlePollInterval, or at once when Wake() is called.
  void Serve(const std::atomic<bool>& stop, std::chrono::nanoseconds busy_until_idle);
  static constexpr std::chrono::milliseconds kIdlePollInterval{50};
  // Interrupts a Serve sleeping in poll(), from any thread.
  void Wake() { worker_.Signal(); }
  // Read it after Serve returned (or from Serve's thread).
  ServeCounters Counters() const;

  // ---- what the endpoint really uses ----

  // ucp_ep_print_info of the endpoint; "" when not connected.
  std::string EndpointInfoText() const { return endpoint_.InfoText(); }
  // The distinct (transport, device) pairs of the endpoint's data lanes, e.g. {"tcp", "ra0"}.
  // Empty when not connected or when the text does not parse (`error` says why; may be null).
  std::vector<std::pair<std::string, std::string>> LaneTransports(std::string* error = nullptr);

 private:
  UcxProbeSide() = default;

  // Tags of the RTT ping-pong and the AM id of throughput messages; both sides use the same.
  static constexpr ucp_tag_t kPingTag = 0x7261696c70696e67;  // "railping"
  static constexpr ucp_tag_t kPongTag = 0x7261696c706f6e67;  // "railpong"
  static constexpr unsigned kProbeAmId = 0x5a;
  static constexpr unsigned kRttWarmupRoundTrips = 8;
  using Clock = std::chrono::steady_clock;

  bool RegisterAmHandler(std::string* error_reason, std::string* error_message);
  // Allocates and registers the buffer of `memory`'s type (see Create).
  bool MapBuffer(std::size_t bytes, const SideMemory& memory, std::string* error_reason,
                 std::string* error_message);
  // A staging side's copy for one operation: device -> pinned before a put or AM send, pinned ->
  // device for a get (the previous get's data: the cost is the same, and the copy stays inside
  // the timed loop). False, and staging_error_, when the driver failed.
  bool StageForOperation(UcxOperation operation, std::size_t message_bytes);
  static ucs_status_t OnAmMessage(void* arg, const void* header, std::size_t header_length,
                                  void* data, std::size_t length,
                                  const ucp_am_recv_param_t* param) noexcept;
  static void OnAmReceived(void* request, ucs_status_t status, std::size_t length,
                           void* user_data) noexcept;

  // ---- initiator (throughput.cc, rtt.cc) ----
  bool CheckReadyToInitiate(bool needs_remote_memory, std::size_t message_bytes,
                            std::string* reason, std::string* message) const;
  // RunThroughput's and WarmUpOnly's checks of their arguments; false and the outcome's error.
  bool CheckThroughputArguments(UcxOperation operation, std::size_t message_bytes, unsigned window,
                                ThroughputOutcome* outcome) const;
  // Records an aborted throughput run in `outcome` and aborts the endpoint (AbortEndpoint).
  void AbortThroughput(UcxOperation operation, const std::string& reason,
                       const std::string& message, ThroughputOutcome* outcome);
  // Posts one operation of the throughput loop; false when UCX refused it (tracker records why).
  bool PostOperation(UcxOperation operation, std::size_t message_bytes);
  // The untimed warm-up (one window and a flush) and the timed phase; each returns the abort
  // reason or "".
  // A warm-up that reaches `limit` with operations in flight is not an abort (they complete in
  // the timed phase): `reached_limit`, and `window` becomes what the rail completes in one limit
  // after the wire-up (its first operation), at least 1.
  std::string WarmUp(UcxOperation operation, std::size_t message_bytes, unsigned* window,
                     std::chrono::nanoseconds limit, const std::atomic<bool>* cancel,
                     bool* reached_limit, std::string* message);
  // The timed phase; `outcome` gets its operations, bytes and seconds (and a note when the drain
  // reached `drain_limit`, which is not an abort).
  std::string TimedPhase(UcxOperation operation, std::size_t message_bytes, unsigned window,
                         std::chrono::nanoseconds duration, std::chrono::nanoseconds drain_limit,
                         const std::atomic<bool>* cancel, ThroughputOutcome* outcome,
                         std::string* message);
  // Posts whenever fewer than `window` operations are outstanding, until `stop_posting_at`, an
  // operation or the endpoint fails, or `cancel`; the abort reason or "".
  // `intervals` sees the bytes completed so far at every pass.
  std::string KeepWindowFull(UcxOperation operation, std::size_t message_bytes, unsigned window,
                             Clock::time_point stop_posting_at, const std::atomic<bool>* cancel,
                             IntervalRecorder& intervals, std::string* message);
  // Progresses until the tracker has seen `target` completions, or the deadline, a cancel or an
  // endpoint error; returns the abort reason or "".
  std::string WaitForCompletions(std::uint64_t target, Clock::time_point deadline,
                                 const std::atomic<bool>* cancel, std::string* message);
  std::string FlushEndpoint(Clock::time_point deadline, const std::atomic<bool>* cancel,
                            std::string* message);
  // One ping-pong; returns the abort reason or "".
  std::string PingPong(std::size_t message_bytes, Clock::time_point deadline,
                       const std::atomic<bool>* cancel, Clock::time_point* echoed_at,
                       std::string* message);
  // Progresses until the echo arrived and the ping's send completed; the abort reason or "".
  std::string WaitForEcho(std::uint64_t target, Clock::time_point deadline,
                          const std::atomic<bool>* cancel, Clock::time_point* echoed_at,
                          std::string* message);
  static bool Cancelled(const std::atomic<bool>* cancel) {
    return cancel != nullptr && cancel->load(std::memory_order_relaxed);
  }
  static double SecondsBetween(Clock::time_point start, Clock::time_point end) {
    return std::chrono::duration<double>(end - start).count();
  }

  // ---- after an aborted operation (abort.cc) ----
  // Drains (DrainAfterAbort), then closes the endpoint by force so that UCX completes every
  // request it still holds. Returns "" when everything had drained, else why not (for the
  // probe's error message).
  std::string AbortEndpoint();
  // Progresses until every operation posted has completed and a flush of the endpoint has
  // completed, i.e. until the peer has handled and acknowledged all of them. Closing with work
  // still queued at the peer is what kills the peer: over transports without RMA (tcp) UCX 1.13
  // emulates put and get with active messages whose handlers on the target answer each one (a
  // put's completion, a get's reply), and an answer sent into a connection that the initiator
  // closed fails, which ucp_request_try_send treats as fatal ("unexpected error: Endpoint
  // timeout" under ucp_put_handler): the target process aborts. Nothing on the target's side can
  // catch it, so the initiator must not close before the peer has drained. Gives up after
  // kAbortDrainIdle without a completion (or of flushing), kAbortDrainLimit in all, or at once
  // when the endpoint has failed (the connection is gone already); false, and `why`, then.
  bool DrainAfterAbort(std::string* why);
  // Puts the side in quarantine: see quarantined_.
  void Quarantine();

  // ---- responder (responder.cc) ----
  void PostPingReceive();
  void EchoCompletedPing();
  void RecordServeError(ucs_status_t status);

  UcxContextSpec spec_;
  std::chrono::nanoseconds drain_timeout_ = std::chrono::seconds(10);
  // UCX 1.13.1 aborts the process (an assertion in ucp_request_send_state_ff, removed upstream
  // in openucx/ucx#8175) when an endpoint with several lanes is force-closed while operations
  // are posted to a peer that stopped progressing. Such a side, when DrainAfterAbort could not
  // complete every operation, is quarantined instead: its handles are never closed nor
  // progressed again and are leaked when it is destroyed. The number of quarantined sides is
  // bounded; past it, multi-device sides are refused.
  bool quarantined_ = false;

  // GPU memory (SideMemory): declared before the UCX handles, so that it is freed after the
  // mapping that registered it.
  gpu::MemoryType memory_type_ = gpu::MemoryType::kHost;
  gpu::DeviceContext* gpu_ = nullptr;
  std::unique_ptr<gpu::Buffer> device_buffer_;  // kCuda
  std::unique_ptr<gpu::Buffer> pinned_buffer_;  // kCudaHost, and a staging kCuda side's
  bool staged_ = false;
  std::string staging_error_;  // the driver's message of a failed staging copy

  // The destructor releases these explicitly, children first; the declaration order (parents
  // first) would give the same order to the implicit member destructors.
  UcxContext context_;
  UcxProgressWorker worker_;
  UcxLocalBuffer buffer_;

  OperationTracker tracker_;
  TagReceiveState pong_;  // initiator: the echo of the current ping
  TagReceiveState ping_;  // responder: the next ping
  OperationTracker echo_sends_;
  ServeCounters counters_;

  UcxPeerEndpoint endpoint_;
  UcxRemoteBuffer remote_;
};

}  // namespace rail::probe
