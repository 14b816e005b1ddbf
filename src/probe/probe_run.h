// What every initiator-side probe kind, TCP and UCX alike, does around its own data movement,
// written once: the deadline that params.timeout sets, the control session with the peer's
// responder (connect, handshake, probe_setup ... probe_report), the counter cross-check, CPU time
// and the result's bookkeeping, all held together by RunInitiator. Internal to the probe layer.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rail/peer/client.h"
#include "rail/peer/connection.h"
#include "rail/peer/messages.h"
#include "rail/probe/own_runs.h"
#include "rail/probe/probe.h"

namespace rail::probe::detail {

// Threads that are always joined: by JoinAll() or, at the latest, by the destructor.
class JoiningThreads {
 public:
  JoiningThreads() = default;
  ~JoiningThreads() { JoinAll(); }
  JoiningThreads(const JoiningThreads&) = delete;
  JoiningThreads& operator=(const JoiningThreads&) = delete;

  template <typename Function>
  void Start(Function&& function) {
    threads_.emplace_back(std::forward<Function>(function));
  }
  void JoinAll() {
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
    threads_.clear();
  }

 private:
  std::vector<std::thread> threads_;
};

// The end that params.timeout puts on a probe, and the shutdown flag.
class ProbeDeadline {
 public:
  // The probes run in the worker process, on its own clock (the process's).
  ProbeDeadline(std::chrono::milliseconds timeout, const std::atomic<bool>* cancel)
      : deadline_(peer::Deadline::After(base::SystemClock(), timeout)), cancel_(cancel) {}

  peer::Deadline deadline() const { return deadline_; }
  bool Expired() const { return deadline_.Passed(); }
  bool Cancelled() const { return cancel_ != nullptr && cancel_->load(); }
  // Never negative.
  std::chrono::milliseconds Remaining() const;

 private:
  peer::Deadline deadline_;
  const std::atomic<bool>* cancel_;
};

ProbeResult NewResult(const ProbeParams& params);
// A fresh random run id, 16 hex digits.
std::string NewRunId();
// Marks `result` failed (the first failure wins: later ones are consequences) and stamps it.
void SetFailure(ProbeResult* result, const std::string& reason, const std::string& message);

// Reads the counters of the probed rails and of every other known rail before the transfer,
// and fills the cross-check after it. Does nothing without a counter reader.
class CounterCheck {
 public:
  CounterCheck(const ProbeContext& context, const ProbeParams& params);
  // result->counters: the probed rails (shares among them), then every other readable rail
  // (share 0); result->bytes_on_other_rails: the other rails' transmitted bytes, but for those
  // that another run of this process used meanwhile (OwnRuns); result->fabric: the probed rails'
  // fabric evidence.
  void Finish(ProbeResult* result) const;

 private:
  const RailCounterReader* reader_;
  OwnRuns::Registration own_run_;
  std::vector<ProbeRail> rails_;  // probed first, then the others; unique names
  std::vector<std::string> probed_;
  RailCounterSnapshot before_;
  std::vector<RailFabricSample> fabric_before_;  // of rails_[i], the probed ones
};

// The initiator's side of one probe's control session.
class PeerProbeSession {
 public:
  // Connects (context.connect), sends `setup` and waits for probe_setup_reply. On failure sets
  // the result's error and returns false.
  bool Open(const ProbeParams& params, const ProbeContext& context, const peer::ProbeSetup& setup,
            const ProbeDeadline& deadline, ProbeResult* result);
  // Whether Open succeeded: only then does the responder wait for probe_done.
  bool opened() const { return opened_; }
  // The handler's fields of the reply.
  const nlohmann::json& reply() const { return reply_; }
  // Where data streams go: the reply's tcp_address, else the control connection's host.
  std::string DataHost() const;
  std::optional<std::uint16_t> DataPort() const;

  // Sends probe_done with `measured` and waits for probe_report; on failure sets the result's
  // error (unless it already has one) and returns false. False at once unless opened().
  bool Finish(const nlohmann::json& measured, const ProbeDeadline& deadline, nlohmann::json* report,
              ProbeResult* result);

 private:
  std::unique_ptr<peer::PeerClient> client_;
  nlohmann::json reply_ = nlohmann::json::object();
  bool opened_ = false;
};

// One initiator-side probe run as RunInitiator hands it to a kind: the parameters it runs with,
// the result it fills, its deadline, its control sessions' set-up and end, and the counter
// cross-check and CPU time around its transfer.
class InitiatorRun {
 public:
  // Starts the clocks: the deadline, the counters' first reading, the thread's CPU time.
  InitiatorRun(const ProbeParams& params, const ProbeContext& context, ProbeResult* result);
  InitiatorRun(const InitiatorRun&) = delete;
  InitiatorRun& operator=(const InitiatorRun&) = delete;

  const ProbeParams& params() const { return params_; }
  const ProbeContext& context() const { return context_; }
  const ProbeDeadline& deadline() const { return deadline_; }
  ProbeResult& result() { return *result_; }

  // probe_setup of this run's kind over `rails` (named comma-separated) with one message size,
  // the run's duration and `max_bytes` declared to the responder.
  peer::ProbeSetup Setup(const std::vector<ProbeRail>& rails, std::uint64_t message_bytes,
                         std::uint64_t max_bytes) const;
  // Connects to the peer's responder, authenticates and sends `setup` (PeerProbeSession::Open).
  bool OpenSession(const peer::ProbeSetup& setup, PeerProbeSession* session);
  // probe_done with `measured`, plus "error" when the result has failed: it goes out even then,
  // so that the responder stops serving at once. The peer's report; nullopt when the session
  // never opened or no report came (the result then says why).
  std::optional<nlohmann::json> FinishSession(PeerProbeSession* session, nlohmann::json measured);

  // Reads the counters again and fills the result's cross-check, once: Finish does it for the
  // kinds that need not see it first.
  void CheckCounters();
  // The run ends before any transfer, and its result stands as its failure left it: no counter
  // cross-check, no CPU time. (What the TCP kinds report when the control session fails; the UCX
  // kinds report both even then.)
  void EndBeforeTransfer() { ended_before_transfer_ = true; }
  // Unless the run ended before its transfer: the counter cross-check, the CPU time, and the
  // verdict, success unless a failure was recorded.
  void Finish();

 private:
  const ProbeParams& params_;
  const ProbeContext& context_;
  ProbeResult* result_;
  const double cpu_start_;
  const ProbeDeadline deadline_;
  const CounterCheck counters_;
  bool counters_checked_ = false;
  bool ended_before_transfer_ = false;
  // Sent in every probe_setup of this run, so that a responder admits a multi-rail run's
  // sessions together (peer/bulk_gate.h).
  const std::string run_id_;
};

// How RunInitiator starts a kind.
struct InitiatorKind {
  ProbeKind kind = ProbeKind::kUcxThroughput;
  std::optional<std::string> invalid;  // why the parameters cannot run; nullopt when they can
  // The kind probes one rail: given several, it runs over the first, which alone the result
  // names (the UCX single-rail kinds; the TCP kinds use the first rail but name them all).
  bool first_rail_only = false;
};

// A probe run of `kind.kind`: refuses invalid parameters ("invalid_argument"), then runs `body`
// inside an InitiatorRun and finishes it. A probe never throws: an exception becomes the
// "internal" failure.
ProbeResult RunInitiator(const InitiatorKind& kind, const ProbeParams& params,
                         const ProbeContext& context,
                         const std::function<void(InitiatorRun&)>& body);

// Marks the result successful (or stamps its failure) and its finishing time.
void FinishResult(ProbeResult* result);

// The peer's CPU time from its report: the responder's cpu_seconds.
std::optional<double> PeerCpuSeconds(const std::optional<nlohmann::json>& report);

// "a,b,c".
std::string JoinRailNames(const std::vector<ProbeRail>& rails);

// Fields of a peer's report; nullopt when absent, mistyped or negative.
std::optional<double> ReportNumber(const nlohmann::json& report, const char* field);
std::optional<std::uint64_t> ReportCount(const nlohmann::json& report, const char* field);

}  // namespace rail::probe::detail
