#include "rail/health/fabric_sampler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string_view>

#include "health/fabric_evidence.h"
#include "rail/nic/rdma_counters.h"

namespace rail::health {
namespace {

// A sample reads the counters ObserveFabric records and what finds the rails, nothing else: the
// other counter files, the devices' identity, the ports' rate and LIDs, the netdevs' link
// attributes and statistics/ and the QoS configuration (with the 802.3x pause settings read with
// it) are the scrapes' business. Every ten seconds, all of a large host's ~3,000 counter files
// would cost more than its scrapes do; the rest was half of what a sample read.
inventory::Sources SampledOnly(inventory::Sources sources) {
  sources.qos = false;
  sources.netdev.statistics = false;
  sources.netdev.link_attributes = false;
  sources.infiniband.identity = false;
  sources.infiniband.port_link_details = false;
  sources.infiniband.counter_filter = [](std::string_view file) {
    if (file == detail::kSampledPortCounter) return true;
    const auto files = nic::FabricHwCounterFiles();
    return std::find(files.begin(), files.end(), file) != files.end();
  };
  return sources;
}

}  // namespace

FabricSampler::FabricSampler(inventory::Sources sources, Thresholds thresholds,
                             std::shared_ptr<CounterHistory> history, const base::Clock& clock)
    : sources_(SampledOnly(std::move(sources))),
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
  const auto readings_before = history_->Readings();
  sysfs::ReadErrors errors;  // a scrape counts and logs what fails; a sample only skips it
  inventory::Snapshot snapshot(sources_, errors);
  const auto now = clock_.Now();
  last_sample_at_ = now;
  if (devices_ && now - discovered_at_ < kRediscoverAfter &&
      sysfs::RereadCounters(*sources_.sys, *devices_, errors)) {
    snapshot.UseDevices(*devices_);
  } else {
    devices_ = snapshot.Devices();
    discovered_at_ = now;
    discoveries_.fetch_add(1);
  }
  HealthInputs inputs;
  inputs.rails = &snapshot.Rails();
  inputs.devices = &snapshot.Devices();
  inputs.net_devices = &snapshot.NetDevices();
  inputs.fabric = &snapshot.Fabric();
  inputs.thresholds = thresholds_;
  // Due, so no spacing: a scrape's reading since would have put it off.
  detail::ObserveFabric(inputs, readings_before, now, base::Duration::zero(), *history_);
  samples_.fetch_add(1);
}

base::Duration FabricSampler::NextSampleIn() const {
  const auto interval = thresholds_.fabric_sample_interval;
  if (interval <= base::Duration::zero()) return base::Duration::zero();
  auto latest = last_sample_at_.load();
  if (const auto reading = history_->LatestReadingAt()) latest = std::max(latest, *reading);
  return std::clamp(latest + interval - clock_.Now(), base::Duration::zero(), interval);
}

// Each wait ends when the next sample is due on the clock, and is looked at again on waking: a
// scrape's reading meanwhile puts the sample off.
void FabricSampler::Loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (const auto wait = NextSampleIn(); wait > base::Duration::zero()) {
      wake_.wait_for(lock, wait, [this] { return stopping_; });
      continue;
    }
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
