// This process's probe runs in progress and the rails they use, so that a run's counter
// cross-check can tell its own agent's traffic from traffic that is not ours: a latency probe on
// rail1 running while a probe on rail0 reads its counters is this agent's doing, not bytes that
// leaked onto rail1 nor another application's.
//
// The agent registers every run it starts (the TCP kinds in process, the UCX kinds around the
// call into the worker), the worker every run it executes; each process keeps its own registry.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace rail::probe {

class OwnRuns {
 public:
  // The registry of this process.
  static OwnRuns& Process();

  // One run, from construction to destruction: its rails are in use by this agent meanwhile.
  class Registration {
   public:
    Registration(OwnRuns& runs, std::vector<std::string> rails);
    ~Registration();
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    // The rails any other run of this process used at some time while this one was registered.
    std::set<std::string> OverlappingRails() const;

   private:
    OwnRuns& runs_;
    std::uint64_t id_;
  };

 private:
  struct Active {
    std::uint64_t id = 0;
    std::vector<std::string> rails;
    std::set<std::string> overlapping;  // other runs' rails seen while this one was active
  };
  std::uint64_t Add(std::vector<std::string> rails);
  void Remove(std::uint64_t id);
  std::set<std::string> Overlapping(std::uint64_t id) const;

  mutable std::mutex mutex_;
  std::uint64_t next_id_ = 1;
  std::vector<Active> active_;
};

}  // namespace rail::probe
