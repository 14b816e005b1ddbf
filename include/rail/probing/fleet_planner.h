// The fleet planner: discovery refreshed on a thread of its own, this agent found among the
// targets, and this host's plan for the current epoch. When the plan's pairs change (a peer joined
// or left next to us on a ring, or a new epoch), the owner is told, and re-makes its probe jobs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rail/base/clock.h"
#include "rail/fleet/discovery.h"
#include "rail/fleet/plan.h"
#include "rail/fleet/status.h"
#include "rail/probing/config.h"

namespace rail::probing {

// The discovery sources of the fleet section, in the order the configuration lists them.
std::vector<std::unique_ptr<fleet::Source>> MakeDiscoverySources(const FleetConfig& config);

class FleetPlanner {
 public:
  using PlanChanged = std::function<void(const std::vector<fleet::PlannedPair>&)>;
  // The name each probed target's responder gave in its welcome.
  using PeerNames = std::function<std::map<std::string, std::string>()>;

  struct Identity {
    std::uint16_t responder_port = 0;  // how this agent finds itself when fleet.self is not set
    std::string name;                  // the name it gives in its own welcome
  };

  // `rails`: the local rails' names. `on_change` runs on the fleet thread.
  FleetPlanner(FleetConfig config, std::vector<std::unique_ptr<fleet::Source>> sources,
               std::vector<std::string> rails, Identity identity, const base::Clock& clock,
               PeerNames peer_names, PlanChanged on_change);
  ~FleetPlanner();
  FleetPlanner(const FleetPlanner&) = delete;
  FleetPlanner& operator=(const FleetPlanner&) = delete;

  void Start();
  void Stop();
  // Refreshes the due sources and recomputes the plan now; what the thread does each wake-up.
  void Update();
  fleet::FleetStatus Status() const;

 private:
  void Loop();
  std::string FindSelf(const std::vector<fleet::Target>& targets);
  // The names targets answered with, kept while they are discovered: a duplicate left out of the
  // plan is probed no more, so its name must outlive its series, or it would come back.
  const std::map<std::string, std::string>& LearnNames(const std::vector<fleet::Target>& targets);
  // Under mutex_: the planned peers' names, and the duplicates left out (logged when they change).
  void RecordNames(const std::vector<fleet::PlannedPair>& planned,
                   const std::map<std::string, std::string>& names,
                   const std::vector<std::string>& duplicates);

  const FleetConfig config_;
  const std::vector<std::string> rails_;
  const Identity identity_;
  const base::Clock& clock_;
  PeerNames peer_names_;
  PlanChanged on_change_;
  fleet::Discovery discovery_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  // Set by Stop: a discovery fetch under way ends within a tenth of a second, whatever its
  // source's timeout (the agent's stop deadline is shared by every part).
  std::atomic<bool> abandon_{false};
  fleet::FleetStatus status_;
  std::map<std::string, std::string> known_names_;  // fleet thread only
  std::string self_error_;  // the last reason this agent was not found, logged on change
  std::thread thread_;
};

}  // namespace rail::probing
