// How many bulk transfers (throughput probes) a host takes part in at once, as initiator and as
// responder alike. Both sides read the same setting (`bulk_concurrency` in the configuration):
// what limits a host is its CPU and PCIe, whichever side of the probe it is on.
#pragma once

namespace rail::base {

enum class BulkConcurrency {
  // One bulk transfer per host at a time: two rails of one host measured at once share its CPU
  // and PCIe, and a healthy rail reads slow (9.9 against 26.8 Gbit/s in the lab, issue 11).
  kPerHost,
  // One per rail at a time: for hosts whose CPU and PCIe feed every rail at line rate at once.
  kPerRail,
};

// The default, here only: the layers' options and the configuration all start from it.
inline constexpr BulkConcurrency kDefaultBulkConcurrency = BulkConcurrency::kPerHost;

}  // namespace rail::base
