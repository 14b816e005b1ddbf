// The addresses a discovery source fetched, in its order: what the sources' tests compare.
#pragma once

#include <string>
#include <vector>

#include "rail/fleet/discovery.h"

namespace rail::fleet {

inline std::vector<std::string> Addresses(const FetchResult& result) {
  std::vector<std::string> addresses;
  for (const auto& target : result.targets.value()) addresses.push_back(target.address);
  return addresses;
}

}  // namespace rail::fleet
