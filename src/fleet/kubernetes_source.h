// The Kubernetes source with its libcurl given, private to the fleet layer: MakeKubernetesSource
// gives the process's (CurlLibrary::Process), the tests none, to see what an agent without
// libcurl reports.
#pragma once

#include <memory>
#include <string>

#include "fleet/curl_library.h"
#include "rail/fleet/discovery.h"

namespace rail::fleet {

// `curl` nullptr: every Fetch fails with `curl_error` (why libcurl could not be loaded).
std::unique_ptr<Source> MakeKubernetesSourceWith(KubernetesConfig config, const CurlApi* curl,
                                                 std::string curl_error);

}  // namespace rail::fleet
