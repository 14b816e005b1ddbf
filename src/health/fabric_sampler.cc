#include "rail/health/fabric_sampler.h"

#include <spdlog/spdlog.h>

#include "health/fabric_evidence.h"

namespace rail::health {
namespace {

// A sample reads counters: the QoS configuration (and the 802.3x pause settings read with it) is
// the scrapes' business.
inventory::Sources WithoutQos(inventory::Sources sources) {
  sources.qos = false;
  return sources;
}

}  // namespace

FabricSampler::FabricSampler(inventory::Sources sources, Thresholds thresholds,
                             std::shared_ptr<CounterHistory> history, const base::Clock& clock)
    : sources_(WithoutQos(std::move(sources))),
      thresholds_(thresholds),
      history_(std::move(history)),
      clock_(clock) {}

FabricSampler::~FabricSampler() {
  Stop();
}

void FabricSampler::Start() {
  SampleOnce();
  if (thresholds_.fabric_sample_interval <= base::Duration::zero() || thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void FabricSampler::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FabricSampler::SampleOnce() {
  sysfs::ReadErrors errors;  // a scrape counts and logs what fails; a sample only skips it
  inventory::Snapshot snapshot(sources_, errors);
  HealthInputs inputs;
  inputs.rails = &snapshot.Rails();
  inputs.devices = &snapshot.Devices();
  inputs.net_devices = &snapshot.NetDevices();
  inputs.fabric = &snapshot.Fabric();
  inputs.thresholds = thresholds_;
  detail::ObserveFabric(inputs, clock_.Now(), *history_);
  samples_.fetch_add(1);
}

// The wait is the interval itself, not a deadline on the clock: a sample's time is the clock's,
// and a late or early wake-up only moves when the next one is taken.
void FabricSampler::Loop() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, thresholds_.fabric_sample_interval, [this] { return stopping_; })) {
    lock.unlock();
    try {
      SampleOnce();
    } catch (const std::exception& error) {
      spdlog::error("fabric sample failed: {}", error.what());
    }
    lock.lock();
  }
}

}  // namespace rail::health
