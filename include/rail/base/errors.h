// The project's one error convention (docs/architecture.md, "Errors"):
//  * input a person wrote (flags, --config.file, --web.config.file) that cannot be used throws an
//    InputError, or a type derived from it, whose message names the file and key or the flag;
//    main turns it into a one-line error and a non-zero exit;
//  * failures of the environment at run time (an unreadable file, a dead peer, a failed probe)
//    are values, never exceptions across a layer: std::optional or a struct with a reason, counted
//    in a metric and logged through RateLimitedLog (rail/base/log.h).
#pragma once

#include <stdexcept>

namespace rail::base {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace rail::base
