// The network the UCX tests run over, and a pair of probe sides wired to each other in-process
// (the blobs are handed over directly, like ucx_perftest's fake out-of-band exchange).
//
// UCX 1.13's tcp transport accepts the loopback device, but a loopback "rail" cannot show that a
// context restricted to one device uses exactly that device, and one loopback device cannot make
// two rails. So, as root, the test process moves itself into a private network namespace (and a
// private mount namespace with its own /sys, because UCX enumerates tcp devices by listing
// /sys/class/net) and creates two veth pairs there:
//   rail 0: ux0a 10.210.0.1/24 <-> ux0b 10.210.0.2/24
//   rail 1: ux1a 10.211.0.1/24 <-> ux1b 10.211.0.2/24
// Side A uses the "a" ends, side B the "b" ends. Nothing outside the test process sees them, and
// they vanish with it. Without root the single-rail tests run over "lo" and the two-rail tests
// skip.
#pragma once

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "probe/ucx/side.h"

namespace rail::probe {

// Names the operation in gtest's output (found by argument-dependent lookup, so it lives in the
// namespace of UcxOperation).
inline void PrintTo(UcxOperation operation, std::ostream* out) {
  *out << UcxOperationName(operation);
}

}  // namespace rail::probe

namespace rail::probe::testing {

struct TestNetwork {
  bool veth_rails = false;   // the private namespace with two veth rails exists
  std::string why_no_rails;  // when it does not
  std::string Device(unsigned rail, char side) const {
    if (!veth_rails) return "lo";
    return "ux" + std::to_string(rail) + side;
  }
};

inline TestNetwork& MutableNetwork() {
  static TestNetwork network;
  return network;
}
inline const TestNetwork& Network() {
  return MutableNetwork();
}

class PrivateNetworkEnvironment : public ::testing::Environment {
  static bool WaitOperstateUp(const std::string& device) {
    const std::string path = "/sys/class/net/" + device + "/operstate";
    for (int attempt = 0; attempt < 200; ++attempt) {
      if (FILE* file = std::fopen(path.c_str(), "r")) {
        char state[16] = {};
        const bool up =
            std::fgets(state, sizeof(state), file) != nullptr && std::strncmp(state, "up", 2) == 0;
        std::fclose(file);
        if (up) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

 public:
  void SetUp() override {
    TestNetwork& network = MutableNetwork();
    if (geteuid() != 0) {
      network.why_no_rails = "not root: veth rails need CAP_NET_ADMIN";
      return;
    }
    // Runs before any test starts a thread, so the whole process moves (unsharing the mount
    // namespace is refused to a multi-threaded process).
    if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) {
      network.why_no_rails = std::string("unshare: ") + std::strerror(errno);
      return;
    }
    // A private copy of the mounts, with a /sys that shows this namespace's devices.
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        umount2("/sys", MNT_DETACH) != 0 || mount("sysfs", "/sys", "sysfs", 0, nullptr) != 0) {
      network.why_no_rails = std::string("remounting /sys: ") + std::strerror(errno);
      return;
    }
    const std::vector<std::string> commands = {
        "ip link set lo up",
        "ip link add ux0a type veth peer name ux0b",
        "ip link add ux1a type veth peer name ux1b",
        "ip addr add 10.210.0.1/24 dev ux0a",
        "ip addr add 10.210.0.2/24 dev ux0b",
        "ip addr add 10.211.0.1/24 dev ux1a",
        "ip addr add 10.211.0.2/24 dev ux1b",
        "ip link set ux0a up",
        "ip link set ux0b up",
        "ip link set ux1a up",
        "ip link set ux1b up",
    };
    for (const std::string& command : commands) {
      if (std::system((command + " 2>&1").c_str()) != 0) {
        network.why_no_rails = "'" + command + "' failed";
        return;
      }
    }
    // A veth's carrier comes up asynchronously, and UCX ignores an interface that is not
    // running yet; on a loaded machine that takes a moment.
    for (const char* device : {"ux0a", "ux0b", "ux1a", "ux1b"}) {
      if (!WaitOperstateUp(device)) {
        network.why_no_rails = std::string(device) + " did not come up within 10 s";
        ADD_FAILURE() << network.why_no_rails;
        return;
      }
    }
    network.veth_rails = true;
  }
};

inline ::testing::Environment* const kPrivateNetwork =
    ::testing::AddGlobalTestEnvironment(new PrivateNetworkEnvironment);

inline UcxContextSpec TcpSpec(std::vector<std::string> devices, unsigned max_rndv_rails = 1) {
  UcxContextSpec spec;
  spec.net_devices = std::move(devices);
  spec.transports = "tcp";
  spec.max_rndv_rails = max_rndv_rails;
  return spec;
}

inline std::unique_ptr<UcxProbeSide> CreateSide(const UcxContextSpec& spec,
                                                std::size_t buffer_bytes) {
  std::string reason;
  std::string message;
  auto side = UcxProbeSide::Create(spec, buffer_bytes, &reason, &message);
  EXPECT_TRUE(side) << reason << ": " << message;
  return side;
}

// An initiator and a responder connected to each other; the responder serves on its own thread
// from StartServing() until destruction.
class ProbePair {
 public:
  ProbePair(const UcxContextSpec& initiator_spec, const UcxContextSpec& responder_spec,
            std::size_t buffer_bytes) {
    initiator = CreateSide(initiator_spec, buffer_bytes);
    responder = CreateSide(responder_spec, buffer_bytes);
    if (!initiator || !responder) return;
    std::string reason;
    std::string message;
    connected = responder->Connect(initiator->WorkerAddress(), &reason, &message) &&
                initiator->Connect(responder->WorkerAddress(), &reason, &message) &&
                initiator->SetRemoteMemory(responder->PackedRkey(), responder->BufferAddress(),
                                           responder->BufferBytes(), &reason, &message);
    EXPECT_TRUE(connected) << reason << ": " << message;
  }
  // Closes as the agents do: the initiator politely while the responder serves (a polite close
  // needs the peer's progress), then the responder by force.
  ~ProbePair() {
    if (initiator && responder) {
      if (!serving.joinable()) StartServing();
      initiator->Disconnect();
      StopServing();
      responder->Disconnect(UcxProbeSide::CloseMode::kForce);
    }
    StopServing();
  }

  void StartServing(std::chrono::nanoseconds busy_until_idle = std::chrono::milliseconds(5)) {
    serving = std::thread([this, busy_until_idle] {
      const double cpu_before = ThreadCpuSeconds();
      responder->Serve(stop, busy_until_idle);
      responder_cpu_seconds = ThreadCpuSeconds() - cpu_before;
    });
  }
  void StopServing() {
    stop = true;
    if (serving.joinable()) {
      responder->Wake();
      serving.join();
    }
  }

  std::unique_ptr<UcxProbeSide> initiator;
  std::unique_ptr<UcxProbeSide> responder;
  bool connected = false;
  std::atomic<bool> stop{false};
  std::thread serving;
  double responder_cpu_seconds = 0;
};

}  // namespace rail::probe::testing
