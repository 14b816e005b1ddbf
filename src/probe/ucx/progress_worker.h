// A probe side's UCX progress worker (a ucp_worker, not the probe worker process): progress, its
// address for the peer, and sleeping on its event fd.
//
// Created UCS_THREAD_MODE_SERIALIZED, so the side may be handed from one thread to another (the
// control channel creates and connects it, a probe thread runs it) but must never be used by two
// threads at once. Signal() is the one exception: any thread may call it at any time.
#pragma once

#include <chrono>
#include <string>

#include "probe/ucx/handles.h"

namespace rail::probe {

class UcxProgressWorker {
 public:
  // When the worker cannot be armed (a transport without event support), a sleeper still must
  // not spin: it looks at the worker this often instead, trading latency for an idle core.
  static constexpr std::chrono::milliseconds kUnarmableSleep{1};

  // Creates the worker, its address (framed for the peer, see blob.h) and its event fd. False,
  // and the reason and message (either may be null), on failure.
  bool Create(ucp_context_h context, std::string* error_reason, std::string* error_message);

  ucp_worker_h get() const { return worker_.get(); }
  explicit operator bool() const { return static_cast<bool>(worker_); }
  const std::string& AddressBlob() const { return address_blob_; }
  // One round of progress; true when it did something.
  bool Progress() { return ucp_worker_progress(worker_.get()) != 0; }

  // Sleeps until the worker has something to progress, Signal() is called or `timeout` passes;
  // true when an event (not the timeout) ended the sleep. It arms the worker first: that fails
  // with UCS_ERR_BUSY when events arrived since the last progress (then it does not sleep at
  // all), and with other errors when the worker cannot be armed (then it sleeps
  // kUnarmableSleep). `arm_status` gets what arming returned.
  bool SleepUntilEvent(std::chrono::milliseconds timeout, ucs_status_t* arm_status);
  // Interrupts SleepUntilEvent, from any thread.
  void Signal();

  // Releases the address, then the worker.
  void reset();
  // Forgets both handles without releasing them (a quarantined side's, see detail::KeepForever).
  void Leak();

 private:
  UcxWorker worker_;
  UcxWorkerAddress address_;  // after worker_: released first
  std::string address_blob_;
  int event_fd_ = -1;  // owned by the worker
};

}  // namespace rail::probe
