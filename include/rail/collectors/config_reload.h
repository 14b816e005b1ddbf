// The outcome of the agent's configuration reloads, as the exporter collector publishes it
// (rail_exporter_config_last_reload_successful, ..._success_timestamp_seconds). The agent records
// each reload here; the stamp comes from the clock the record is given.
#pragma once

#include <mutex>

#include "rail/base/clock.h"
#include "rail/collectors/collector.h"

namespace rail::collectors {

class ConfigReloadRecord {
 public:
  // The start counts as a successful reload, stamped now.
  explicit ConfigReloadRecord(const base::Clock& clock);

  void Record(bool successful);
  ConfigReloadState Last() const;

 private:
  const base::Clock& clock_;
  mutable std::mutex mutex_;
  ConfigReloadState last_;
};

}  // namespace rail::collectors
