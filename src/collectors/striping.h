// Part of the probe collector's exposition: each peer's striping efficiency, or why it is
// withheld (probe/striping.h), and the capacity re-measures it caused.
#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "rail/probe/result_store.h"
#include "rail/probe/striping.h"

namespace rail::collectors::detail {

// `efficiencies`: the scrape's (SnapshotVerdicts::striping), the ones its check judged.
void AddStriping(const std::vector<probe::StripingEfficiency>& efficiencies,
                 const probe::ResultStore& store, std::vector<prometheus::MetricFamily>& out);

}  // namespace rail::collectors::detail
