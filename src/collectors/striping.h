// Part of the probe collector's exposition: each peer's striping efficiency, or why it is
// withheld (probe/striping.h), and the capacity re-measures it caused.
#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "rail/probe/figures.h"
#include "rail/probe/result_store.h"

namespace rail::collectors::detail {

void AddStriping(const std::vector<probe::SeriesState>& series, const probe::ResultStore& store,
                 const probe::FigureLimits& figures, std::vector<prometheus::MetricFamily>& out);

}  // namespace rail::collectors::detail
