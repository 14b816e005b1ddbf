// An in-process responder (peer::Responder over MakeProbeHandlerFactory) and the UCX probes
// against it, over the two veth rails of ucx_test_network.h:
//   initiator ("a" ends): rail0 = ux0a 10.210.0.1, rail1 = ux1a 10.211.0.1
//   responder ("b" ends): rail0 = ux0b 10.210.0.2, rail1 = ux1b 10.211.0.2
//
// Both ends live in the test's one private namespace, where the kernel would deliver traffic
// between two local addresses over loopback and the veths' counters would never move. So, after
// the namespace exists, locally generated packets to the other end's address are routed out of
// this end's veth (a rule for "iif lo" ahead of the local table) and accepted on arrival although
// their source is local (accept_local, no reverse-path filter): every byte crosses the veth pair
// and its counters, as between two hosts, and the counter cross-check means something.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "rail/peer/client.h"
#include "rail/peer/responder.h"
#include "rail/probe/handler_factory.h"
#include "rail/probe/in_process.h"
#include "rail/probe/probe.h"
#include "rail/probe/ucx.h"
#include "rail/sysfs/filesystem.h"
#include "ucx_test_network.h"

namespace rail::probe::testing {

struct VethRouting {
  bool routed = false;
  std::string why_not;
};

inline VethRouting& MutableVethRouting() {
  static VethRouting routing;
  return routing;
}

class VethRoutingEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    VethRouting& routing = MutableVethRouting();
    if (!Network().veth_rails) {
      routing.why_not = Network().why_no_rails;
      return;
    }
    const std::vector<std::string> commands = {
        "sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0",
        "sysctl -qw net.ipv4.conf.all.accept_local=1",
        "sysctl -qw net.ipv4.conf.ux0a.accept_local=1 net.ipv4.conf.ux0b.accept_local=1",
        "sysctl -qw net.ipv4.conf.ux1a.accept_local=1 net.ipv4.conf.ux1b.accept_local=1",
        "sysctl -qw net.ipv4.conf.ux0a.rp_filter=0 net.ipv4.conf.ux0b.rp_filter=0",
        "sysctl -qw net.ipv4.conf.ux1a.rp_filter=0 net.ipv4.conf.ux1b.rp_filter=0",
        "ip route add table 210 10.210.0.2 dev ux0a src 10.210.0.1",
        "ip route add table 210 10.210.0.1 dev ux0b src 10.210.0.2",
        "ip route add table 210 10.211.0.2 dev ux1a src 10.211.0.1",
        "ip route add table 210 10.211.0.1 dev ux1b src 10.211.0.2",
        "ip rule add pref 10 iif lo lookup 210",
        "ip rule add pref 100 lookup local",
        "ip rule del pref 0 lookup local",
    };
    for (const std::string& command : commands) {
      if (std::system((command + " 2>&1").c_str()) != 0) {
        routing.why_not = "'" + command + "' failed";
        return;
      }
    }
    routing.routed = true;
  }
};

// Defined after ucx_test_network.h's environment in every file that includes this header, so it
// is registered (and set up) after the namespace and its veths exist.
inline ::testing::Environment* const kVethRouting =
    ::testing::AddGlobalTestEnvironment(new VethRoutingEnvironment);

inline ProbeRail VethRail(unsigned index, char side, bool expect_rdma = false) {
  ProbeRail rail;
  rail.name = "rail" + std::to_string(index);
  rail.ucx_device = "ux" + std::to_string(index) + side;
  rail.netdev = rail.ucx_device;
  rail.ipv4 = "10." + std::to_string(210 + index) + ".0." + (side == 'a' ? "1" : "2");
  rail.expect_rdma = expect_rdma;
  return rail;
}

#define SKIP_WITHOUT_VETH_RAILS()                                                          \
  do {                                                                                     \
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the UCX probe tests run over veths";  \
    if (!::rail::probe::testing::Network().veth_rails)                                     \
      GTEST_SKIP() << "no veth rails: " << ::rail::probe::testing::Network().why_no_rails; \
  } while (false)

class UcxProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_VETH_RAILS();
    peer::ResponderOptions options;
    options.listen_host = "127.0.0.1";
    options.port = 0;
    options.secret = secret_;
    options.versions = {"responder-1.0", "1.13.1"};
    options.probe_grace = std::chrono::seconds(2);
    options.limits.probe_burst_per_peer = 100;
    responder_ = std::make_unique<peer::Responder>(options, Factory());
    std::string error;
    ASSERT_TRUE(responder_->Start(&error)) << error;
    context_.connect = peer::MakePeerConnector(secret_, {"initiator-1.0", "1.13.1"}, nonces_);
    context_.counters = &counter_reader_;
    context_.all_rails = {VethRail(0, 'a'), VethRail(1, 'a')};
  }

  // The responder's handlers; tests override it to misbehave.
  virtual peer::ProbeHandlerFactory Factory() {
    return MakeProbeHandlerFactory({VethRail(0, 'b'), VethRail(1, 'b')});
  }

  ProbeParams Params(ProbeKind kind, std::vector<ProbeRail> rails = {VethRail(0, 'a')}) const {
    ProbeParams params;
    params.kind = kind;
    params.peer = "127.0.0.1:" + std::to_string(responder_->ListeningPort());
    params.rails = std::move(rails);
    params.message_sizes_bytes = {kind == ProbeKind::kUcxRtt ? 8u : 256u * 1024};
    params.window = 8;
    params.duration = std::chrono::milliseconds(300);
    params.timeout = std::chrono::seconds(10);
    params.ucx_transports = "tcp";
    return params;
  }

  ProbeResult Run(const ProbeParams& params) {
    return MakeProbe(params.kind)->Run(params, context_);
  }

  std::shared_ptr<const peer::Secret> secret_ =
      std::make_shared<const peer::Secret>("ucx probe secret");
  base::SteadyClock clock_;
  peer::ReplayCache nonces_{clock_, 1024, std::chrono::minutes(10)};
  sysfs::RootedFilesystem sys_{"/sys"};
  RailCounterReader counter_reader_{sys_};
  ProbeContext context_;
  std::unique_ptr<peer::Responder> responder_;
};

inline double ShareSum(const ProbeResult& result) {
  double sum = 0;
  for (const RailCounterDelta& delta : result.counters) {
    if (std::find(result.rails.begin(), result.rails.end(), delta.rail) != result.rails.end()) {
      sum += delta.share;
    }
  }
  return sum;
}

inline bool HasLane(const ProbeResult& result, const std::string& transport,
                    const std::string& device, const std::string& rail) {
  for (const TransportLane& lane : result.lanes) {
    if (lane.transport == transport && lane.device == device && lane.rail == rail) return true;
  }
  return false;
}

}  // namespace rail::probe::testing
