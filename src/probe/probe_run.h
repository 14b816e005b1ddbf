// What every initiator-side probe kind does around its own data movement: the deadline that
// params.timeout sets, the control session with the peer (probe_setup ... probe_report), the
// counter cross-check, CPU time and result bookkeeping. Internal to the probe layer.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
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
  ProbeDeadline(std::chrono::milliseconds timeout, const std::atomic<bool>* cancel)
      : deadline_(std::chrono::steady_clock::now() + timeout), cancel_(cancel) {}

  peer::Deadline deadline() const { return deadline_; }
  bool Expired() const { return std::chrono::steady_clock::now() >= deadline_; }
  bool Cancelled() const { return cancel_ != nullptr && cancel_->load(); }
  // Never negative.
  std::chrono::milliseconds Remaining() const;

 private:
  peer::Deadline deadline_;
  const std::atomic<bool>* cancel_;
};

ProbeResult NewResult(const ProbeParams& params);
// Marks `result` failed (the first failure wins: later ones are consequences) and stamps it.
void SetFailure(ProbeResult* result, const std::string& reason, const std::string& message);

// Reads the counters of the probed rails and of every other known rail before the transfer,
// and fills the cross-check after it. Does nothing without a counter reader.
class CounterCheck {
 public:
  CounterCheck(const ProbeContext& context, const ProbeParams& params);
  // result->counters: the probed rails (shares among them), then every other readable rail
  // (share 0); result->bytes_on_other_rails: the other rails' transmitted bytes.
  void Finish(ProbeResult* result) const;

 private:
  const RailCounterReader* reader_;
  std::vector<ProbeRail> rails_;  // probed first, then the others; unique names
  std::vector<std::string> probed_;
  RailCounterSnapshot before_;
};

// The initiator's side of one probe's control session.
class PeerProbeSession {
 public:
  // Connects (context.connect), sends `setup` and waits for probe_setup_reply. On failure sets
  // the result's error and returns false.
  bool Open(const ProbeParams& params, const ProbeContext& context, const peer::ProbeSetup& setup,
            const ProbeDeadline& deadline, ProbeResult* result);
  // The handler's fields of the reply.
  const nlohmann::json& reply() const { return reply_; }
  // Where data streams go: the reply's tcp_address, else the control connection's host.
  std::string DataHost() const;
  std::optional<std::uint16_t> DataPort() const;

  // Sends probe_done with `measured` and waits for probe_report; on failure sets the result's
  // error (unless it already has one) and returns false.
  bool Finish(const nlohmann::json& measured, const ProbeDeadline& deadline, nlohmann::json* report,
              ProbeResult* result);

 private:
  std::unique_ptr<peer::PeerClient> client_;
  nlohmann::json reply_ = nlohmann::json::object();
};

// Fields of a peer's report; nullopt when absent, mistyped or negative.
std::optional<double> ReportNumber(const nlohmann::json& report, const char* field);
std::optional<std::uint64_t> ReportCount(const nlohmann::json& report, const char* field);

}  // namespace rail::probe::detail
