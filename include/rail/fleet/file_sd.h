// Prometheus's file_sd format, the one file a fleet's peers are listed in:
//   [{"targets": ["10.0.0.1:9841", ...], "labels": {"rails": "rail0,rail1", ...}}, ...]
// as JSON or YAML (Prometheus reads both; YAML is a superset of JSON, so one parser reads both).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rail/base/errors.h"
#include "rail/fleet/target.h"

namespace rail::fleet {

class FileSdError : public base::InputError {
 public:
  using base::InputError::InputError;
};

// Throws FileSdError naming `source` and the offending entry ("peers.json: [2].targets[0]: ...")
// for anything Prometheus would refuse: not a list, a group without targets, a target that is not
// host:port, a label name that is not [a-zA-Z_][a-zA-Z0-9_]*, a label value that is not a string.
// The targets keep the file's order; duplicates are left to MergeTargets.
std::vector<Target> ParseFileSd(std::string_view text, const std::string& source);

}  // namespace rail::fleet
