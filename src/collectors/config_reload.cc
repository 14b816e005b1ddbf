#include "rail/collectors/config_reload.h"

namespace rail::collectors {

ConfigReloadRecord::ConfigReloadRecord(const base::Clock& clock) : clock_(clock) {
  last_.last_success = clock_.WallNow();
}

void ConfigReloadRecord::Record(bool successful) {
  std::lock_guard lock(mutex_);
  last_.last_successful = successful;
  if (successful) last_.last_success = clock_.WallNow();
}

ConfigReloadState ConfigReloadRecord::Last() const {
  std::lock_guard lock(mutex_);
  return last_;
}

}  // namespace rail::collectors
