// The collectors compiled into the agent. Listed explicitly (no static self-registration,
// which a static library would silently drop).
#pragma once

#include <memory>

#include "rail/collectors/collector.h"

namespace rail::collectors {

std::unique_ptr<Collector> MakeInfinibandCollector();
std::unique_ptr<Collector> MakeGidCollector();
std::unique_ptr<Collector> MakeRailsCollector();
std::unique_ptr<Collector> MakeNetclassCollector();
std::unique_ptr<Collector> MakeHwCountersCollector();
std::unique_ptr<Collector> MakeNetdevCollector();
std::unique_ptr<Collector> MakeBondingCollector();
std::unique_ptr<Collector> MakePcieCollector();
std::unique_ptr<Collector> MakeQosCollector();
std::unique_ptr<Collector> MakeNeighborCollector();
std::unique_ptr<Collector> MakeExporterCollector();
std::unique_ptr<Collector> MakeProbeCollector();
std::unique_ptr<Collector> MakeResponderCollector();
std::unique_ptr<Collector> MakeProbeWorkerCollector();
std::unique_ptr<Collector> MakeGpuDirectCollector();
std::unique_ptr<Collector> MakeHealthCollector();
std::unique_ptr<Collector> MakeFleetCollector();
std::unique_ptr<Collector> MakeEthtoolCollector();

}  // namespace rail::collectors
