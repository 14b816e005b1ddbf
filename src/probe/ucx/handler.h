// The responder's half of every UCX kind.
#pragma once

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "probe/ucx/side.h"
#include "rail/peer/responder.h"
#include "rail/probe/result.h"

namespace rail::probe {

// One side over `rails` (several only for ucx_multirail_throughput), with a buffer of the
// largest requested message size, connected to the initiator's worker address. Setup reply:
// {ucx_worker_address, ucx_rkey (base64), buffer_address, buffer_bytes, devices, memory,
// memory_path, gpu_pci_bus_id}: the buffer is of the request's memory type (host when absent) on
// the GPU nearest the first rail, and "memory" in the reply tells the initiator that this
// responder knew the field at all. Serve:
// UcxProbeSide::Serve (event-driven when idle), then a forced close. Report: {cpu_seconds (Setup
// and Serve), pings_echoed, am_messages, am_bytes, errors[, last_error]}, and for a staging side
// staging_to_device_bytes_per_second and staging_to_host_bytes_per_second (its copies, which the
// initiator adds to the measured time).
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

  // The side's memory as the request asks for it; false and a refusal when it cannot be had.
  bool ChooseMemory(const peer::ProbeSetup& request, SideMemory* memory, std::string* reason,
                    std::string* message);

  ProbeKind kind_;
  std::vector<ProbeRail> rails_;
  std::string gpu_pci_bus_id_;
  std::size_t message_bytes_ = 0;
  std::optional<StagingCopyRates> staging_;  // a staging side's, measured after Serve
  std::unique_ptr<UcxProbeSide> side_;
  double cpu_seconds_ = 0;
  ServeCounters counters_;
};

}  // namespace rail::probe
