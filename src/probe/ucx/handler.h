// The responder's half of every UCX kind.
#pragma once

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "probe/ucx/side.h"
#include "rail/peer/responder.h"
#include "rail/probe/result.h"

namespace rail::probe {

// One side over `rails` (several only for ucx_multirail_throughput), with a buffer of the
// largest requested message size, connected to the initiator's worker address. Setup reply:
// {ucx_worker_address, ucx_rkey (base64), buffer_address, buffer_bytes, devices}. Serve:
// UcxProbeSide::Serve (event-driven when idle), then a forced close. Report: {cpu_seconds (Setup
// and Serve), pings_echoed, am_messages, am_bytes, errors[, last_error]}.
//
// Setup runs on the control session's thread, Serve on the session's serving thread, Report on
// the session thread after Serve returned: the side is handed from thread to thread but never
// used by two at once, as its serialized worker requires.
class UcxHandler final : public peer::ProbeSessionHandler {
 public:
  UcxHandler(ProbeKind kind, std::vector<ProbeRail> rails)
      : kind_(kind), rails_(std::move(rails)) {}
  bool Setup(const peer::ProbeSetup& request, nlohmann::json* reply_fields, std::string* reason,
             std::string* message) override;
  void Serve(const std::atomic<bool>& stop) override;
  nlohmann::json Report() override;

 private:
  // Refuses a request this responder cannot serve; true when it can.
  bool Admit(const peer::ProbeSetup& request, std::string* reason, std::string* message) const;

  ProbeKind kind_;
  std::vector<ProbeRail> rails_;
  std::unique_ptr<UcxProbeSide> side_;
  double cpu_seconds_ = 0;
  ServeCounters counters_;
};

}  // namespace rail::probe
