#include "rail/collectors/collector.h"

namespace rail::collectors {

const health::SnapshotVerdicts& Scrape::Verdicts() {
  if (!verdicts_)
    verdicts_ = health::EvaluateSnapshot(inventory_, sources_.health, readings_before_);
  return *verdicts_;
}

}  // namespace rail::collectors
