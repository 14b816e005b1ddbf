// The fabric checks' evidence on the agent's own cadence: the rails' counters (NIC statistics,
// carrier_down_count, link_downed, hw_counters) sampled into the counter history from a baseline
// taken at start, and again whenever nobody read them for health.fabric_sample_interval, so that
// what the windowed checks say does not depend on who scrapes or how often (a link that flaps
// after start and before the first scrape shows on that scrape). A scrape records what it read
// into the same history (at most every half interval), so a Prometheus scraping at least that
// often leaves the sampler nothing to do: one reading of those files, not two.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "rail/base/clock.h"
#include "rail/health/checks.h"
#include "rail/inventory/snapshot.h"

namespace rail::health {

class FabricSampler {
 public:
  // How long a sample re-reads the counter values of the devices the last full sample found
  // before finding the rails again (listings, ports, GID tables): a rail that appears is sampled
  // within this long, and a device that goes sooner (a value that cannot be read).
  static constexpr std::chrono::minutes kRediscoverAfter{1};

  // `sources` (copied; what it points to outlives the sampler): what each sample reads, the NIC
  // statistics only when sources.fabric is set. `history`: the one the scrapes' checks read.
  FabricSampler(inventory::Sources sources, Thresholds thresholds,
                std::shared_ptr<CounterHistory> history, const base::Clock& clock);
  ~FabricSampler();  // Stop()
  FabricSampler(const FabricSampler&) = delete;
  FabricSampler& operator=(const FabricSampler&) = delete;

  // Takes the baseline now, then samples on a thread of its own whenever the history got no
  // reading for thresholds.fabric_sample_interval (no thread when the interval is 0).
  void Start();
  // Ends the thread; idempotent.
  void Stop();
  // One sample at the clock's now.
  void SampleOnce();
  // How long until the next sample is due: the interval after the later of the history's latest
  // reading (a scrape's or a sample's) and the latest sample begun (one that failed recorded
  // nothing, and must not be retried at once), on the clock; zero when due.
  base::Duration NextSampleIn() const;
  // Samples that found the rails afresh (the first, and one every kRediscoverAfter).
  std::uint64_t Discoveries() const { return discoveries_.load(); }
  // Samples taken so far.
  std::uint64_t Samples() const { return samples_.load(); }

 private:
  void Loop();

  const inventory::Sources sources_;
  const Thresholds thresholds_;
  const std::shared_ptr<CounterHistory> history_;
  const base::Clock& clock_;
  std::atomic<std::uint64_t> samples_{0};
  std::atomic<std::uint64_t> discoveries_{0};
  std::atomic<base::TimePoint> last_sample_at_{base::TimePoint{}};
  // What the last full sample found, and when; used by the sampling thread alone.
  std::optional<std::vector<sysfs::InfinibandDevice>> devices_;
  base::TimePoint discovered_at_{};

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once everything it reads exists
};

}  // namespace rail::health
