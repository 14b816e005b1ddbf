// EndpointSlice lists (discovery.k8s.io/v1) as the API server gives them, read into targets: the
// JSON half of the Kubernetes source (kubernetes_source.cc speaks HTTP), private to the fleet
// layer.
#pragma once

#include <string>
#include <vector>

#include "rail/fleet/target.h"

namespace rail::fleet {

// One ready endpoint of a slice: one pod, one target.
struct SliceEndpoint {
  Target target;
  std::string pod;  // "namespace/name"; "" without a Pod targetRef
  bool ipv6 = false;
};

// What a page says about the list it belongs to.
struct SlicePage {
  std::string continue_token;    // "" on the last page
  std::string resource_version;  // the list's: every page of one consistent list has the same
};

// Appends the ready endpoints of one page (an EndpointSliceList) to `found`. False and *error
// when the answer is not an EndpointSliceList, or a slice lacks the port `port_name` asks for
// (empty: the port named "responder", else a slice's only port).
bool ParseSlicePage(const std::string& body, const std::string& port_name,
                    std::vector<SliceEndpoint>* found, SlicePage* page, std::string* error);

// The targets of a whole list: a dual-stack Service has an IPv4 and an IPv6 slice for the same
// pods, and one pod must be one peer in every agent's plan, so a pod listed in both families keeps
// its IPv4 address (a rule every agent applies alike to the same list).
std::vector<Target> OnePerPod(std::vector<SliceEndpoint> found);

// "HTTP <code>: <message>" from the Status object the API server answers errors with.
std::string StatusError(long code, const std::string& body);

}  // namespace rail::fleet
