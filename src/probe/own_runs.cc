#include "rail/probe/own_runs.h"

#include <algorithm>

namespace rail::probe {

OwnRuns& OwnRuns::Process() {
  static OwnRuns runs;
  return runs;
}

std::uint64_t OwnRuns::Add(std::vector<std::string> rails) {
  const std::lock_guard lock(mutex_);
  Active added{next_id_++, std::move(rails), {}};
  // Each side sees the other's rails: the run already going and the one starting overlap.
  for (Active& other : active_) {
    added.overlapping.insert(other.rails.begin(), other.rails.end());
    other.overlapping.insert(added.rails.begin(), added.rails.end());
  }
  active_.push_back(std::move(added));
  return active_.back().id;
}

void OwnRuns::Remove(std::uint64_t id) {
  const std::lock_guard lock(mutex_);
  std::erase_if(active_, [id](const Active& run) { return run.id == id; });
}

std::set<std::string> OwnRuns::Overlapping(std::uint64_t id) const {
  const std::lock_guard lock(mutex_);
  const auto run = std::find_if(active_.begin(), active_.end(),
                                [id](const Active& one) { return one.id == id; });
  return run == active_.end() ? std::set<std::string>{} : run->overlapping;
}

OwnRuns::Registration::Registration(OwnRuns& runs, std::vector<std::string> rails)
    : runs_(runs), id_(runs.Add(std::move(rails))) {}

OwnRuns::Registration::~Registration() {
  runs_.Remove(id_);
}

std::set<std::string> OwnRuns::Registration::OverlappingRails() const {
  return runs_.Overlapping(id_);
}

}  // namespace rail::probe
