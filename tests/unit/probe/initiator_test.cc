// The initiator frame every probe kind runs in (probe_run.h): parameters refused before anything
// runs, the rails a run probes, the counter cross-check and CPU time around the transfer, the
// verdict, and probe_setup. No peer: the kinds' own tests cover the sessions.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <stdexcept>

#include "probe/probe_run.h"
#include "rail/sysfs/filesystem.h"

namespace rail::probe {
namespace {

using namespace std::chrono_literals;
using detail::InitiatorKind;
using detail::InitiatorRun;

// Netdev byte counters that grow by 10 bytes on every read, and counts their reads; a
// carrier_down_count that stays at 3 (the fabric evidence); no other file.
class GrowingCounters final : public sysfs::Filesystem {
 public:
  int ReadFile(std::string_view path, std::string* contents) const override {
    if (path.ends_with("/carrier_down_count")) {
      *contents = "3\n";
      return 0;
    }
    if (path.find("/statistics/") == std::string_view::npos) return ENOENT;
    const std::lock_guard lock(mutex_);
    ++reads_;
    *contents = std::to_string(10 * reads_) + "\n";
    return 0;
  }
  int ListDirectory(std::string_view, std::vector<std::string>*) const override { return ENOENT; }
  bool IsDirectory(std::string_view) const override { return false; }
  bool Exists(std::string_view) const override { return false; }
  int reads() const {
    const std::lock_guard lock(mutex_);
    return reads_;
  }

 private:
  mutable std::mutex mutex_;
  mutable int reads_ = 0;
};

ProbeRail Rail(const std::string& name) {
  ProbeRail rail;
  rail.name = name;
  rail.netdev = "eth_" + name;
  rail.expect_rdma = false;
  return rail;
}

class InitiatorFrame : public ::testing::Test {
 protected:
  InitiatorFrame() {
    context_.counters = &reader_;
    params_.kind = ProbeKind::kUcxThroughput;  // what RunInitiator must replace
    params_.peer = "peer:1";
    params_.rails = {Rail("r0"), Rail("r1")};
    params_.duration = 1500ms;
  }

  ProbeResult Run(const InitiatorKind& kind, const std::function<void(InitiatorRun&)>& body) {
    return detail::RunInitiator(kind, params_, context_, body);
  }

  GrowingCounters sys_;
  RailCounterReader reader_{sys_};
  ProbeContext context_;
  ProbeParams params_;
};

TEST_F(InitiatorFrame, InvalidParametersAreRefusedBeforeAnythingRuns) {
  bool ran = false;
  const ProbeResult result =
      Run({ProbeKind::kTcpRtt, "duration must be positive"}, [&](InitiatorRun&) { ran = true; });
  EXPECT_FALSE(ran);
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.kind, ProbeKind::kTcpRtt);
  EXPECT_EQ(result.error_reason, "invalid_argument");
  EXPECT_EQ(result.error_message, "duration must be positive");
  EXPECT_EQ(result.rails, (std::vector<std::string>{"r0", "r1"}));
  EXPECT_EQ(sys_.reads(), 0) << "no counter is read for a probe that cannot run";
}

TEST_F(InitiatorFrame, AFirstRailOnlyKindRunsOverTheFirstRailAndNamesItAlone) {
  std::vector<std::string> seen;
  ProbeKind seen_kind = ProbeKind::kTcpThroughput;
  const ProbeResult result =
      Run({ProbeKind::kUcxRtt, std::nullopt, /*first_rail_only=*/true}, [&](InitiatorRun& run) {
        for (const ProbeRail& rail : run.params().rails) {
          seen.push_back(rail.name);
        }
        seen_kind = run.params().kind;
      });
  EXPECT_EQ(seen, std::vector<std::string>{"r0"});
  EXPECT_EQ(seen_kind, ProbeKind::kUcxRtt);
  EXPECT_EQ(result.rails, std::vector<std::string>{"r0"});
  // Only the probed rail is cross-checked when the context knows no other.
  ASSERT_EQ(result.counters.size(), 1u);
  EXPECT_EQ(result.counters[0].rail, "r0");
}

TEST_F(InitiatorFrame, AKindOverEveryRailNamesThemAll) {
  std::size_t seen = 0;
  const ProbeResult result = Run({ProbeKind::kTcpThroughput, std::nullopt},
                                 [&](InitiatorRun& run) { seen = run.params().rails.size(); });
  EXPECT_EQ(seen, 2u);
  EXPECT_EQ(result.rails, (std::vector<std::string>{"r0", "r1"}));
  EXPECT_EQ(result.counters.size(), 2u);
}

TEST_F(InitiatorFrame, ARunWithoutFailureSucceedsWithItsCountersAndCpuTime) {
  const ProbeResult result = Run({ProbeKind::kTcpRtt, std::nullopt}, [](InitiatorRun&) {
    volatile double sink = 0;
    for (int index = 0; index < 2'000'000; ++index) sink = sink + index * 0.5;
  });
  EXPECT_TRUE(result.success) << result.error_reason;
  EXPECT_NE(result.finished_at, std::chrono::system_clock::time_point{});
  EXPECT_GT(result.local_cpu_seconds, 0);
  ASSERT_EQ(result.counters.size(), 2u);
  // Each rail's two counters (tx, rx) were read once before and once after.
  EXPECT_GT(result.counters[0].transmit_bytes, 0u);
  EXPECT_EQ(sys_.reads(), 8);
  // Each probed rail's fabric evidence: the carrier did not go down during the run.
  ASSERT_EQ(result.fabric.size(), 2u);
  EXPECT_EQ(result.fabric[1].rail, "r1");
  EXPECT_EQ(result.fabric[1].counters.at("carrier_down_count"), 0u);
  EXPECT_GE(result.fabric[1].seconds, 0);
}

TEST_F(InitiatorFrame, TheFirstFailureIsTheVerdict) {
  const ProbeResult result = Run({ProbeKind::kTcpRtt, std::nullopt}, [](InitiatorRun& run) {
    detail::SetFailure(&run.result(), "timeout", "first");
    detail::SetFailure(&run.result(), "stream", "a consequence");
  });
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "timeout");
  EXPECT_EQ(result.error_message, "first");
  EXPECT_EQ(result.counters.size(), 2u) << "a failed transfer is still cross-checked";
}

TEST_F(InitiatorFrame, ARunEndedBeforeItsTransferHasNoCrossCheckNorCpuTime) {
  const ProbeResult result = Run({ProbeKind::kTcpRtt, std::nullopt}, [](InitiatorRun& run) {
    detail::SetFailure(&run.result(), "refused", "nobody listens");
    run.EndBeforeTransfer();
  });
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "refused");
  EXPECT_TRUE(result.counters.empty());
  EXPECT_TRUE(result.fabric.empty());
  EXPECT_EQ(result.local_cpu_seconds, 0);
  EXPECT_EQ(sys_.reads(), 4) << "only the reading before the transfer";
}

TEST_F(InitiatorFrame, CountersAreCheckedOnceWhenAKindChecksThemItself) {
  std::size_t counted_in_body = 0;
  const ProbeResult result =
      Run({ProbeKind::kUcxMultirailThroughput, std::nullopt}, [&](InitiatorRun& run) {
        run.CheckCounters();
        counted_in_body = run.result().counters.size();
      });
  EXPECT_EQ(counted_in_body, 2u);
  EXPECT_TRUE(result.success);
  EXPECT_EQ(sys_.reads(), 8) << "Finish does not read the counters a second time";
}

TEST_F(InitiatorFrame, AnExceptionBecomesAnInternalFailure) {
  const ProbeResult result = Run({ProbeKind::kTcpThroughput, std::nullopt},
                                 [](InitiatorRun&) { throw std::runtime_error("out of luck"); });
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.error_reason, "internal");
  EXPECT_EQ(result.error_message, "out of luck");
}

TEST_F(InitiatorFrame, SetupNamesTheRunsKindRailsSizeDurationAndLimit) {
  peer::ProbeSetup setup;
  Run({ProbeKind::kMultirailCapacity, std::nullopt},
      [&](InitiatorRun& run) { setup = run.Setup(run.params().rails, 4096, 1 << 30); });
  EXPECT_EQ(setup.kind, "multirail_capacity");
  EXPECT_EQ(setup.rail, "r0,r1");
  EXPECT_EQ(setup.message_sizes_bytes, std::vector<std::uint64_t>{4096});
  EXPECT_DOUBLE_EQ(setup.duration_seconds, 1.5);
  EXPECT_EQ(setup.max_bytes, std::uint64_t{1} << 30);
  EXPECT_TRUE(setup.ucx_worker_address.empty());
}

TEST_F(InitiatorFrame, TheSetupsOfOneRunShareARunIdThatTheNextRunDoesNot) {
  peer::ProbeSetup r0;
  peer::ProbeSetup r1;
  peer::ProbeSetup next;
  Run({ProbeKind::kMultirailCapacity, std::nullopt}, [&](InitiatorRun& run) {
    r0 = run.Setup({run.params().rails[0]}, 4096, 1 << 30);
    r1 = run.Setup({run.params().rails[1]}, 4096, 1 << 30);
  });
  Run({ProbeKind::kMultirailCapacity, std::nullopt},
      [&](InitiatorRun& run) { next = run.Setup(run.params().rails, 4096, 1 << 30); });
  EXPECT_EQ(r0.run_id.size(), 16u);
  EXPECT_EQ(r0.run_id, r1.run_id);  // a multi-rail run's sessions are admitted together
  EXPECT_NE(r0.run_id, next.run_id);
}

TEST_F(InitiatorFrame, ASessionThatNeverOpenedIsNotFinished) {
  std::optional<nlohmann::json> report = nlohmann::json::object();
  const ProbeResult result = Run({ProbeKind::kTcpRtt, std::nullopt}, [&](InitiatorRun& run) {
    detail::PeerProbeSession session;
    report = run.FinishSession(&session, nlohmann::json{{"round_trips", 0}});
  });
  EXPECT_FALSE(report);
  EXPECT_TRUE(result.success) << "no probe_done to a session that never opened, and no error";
}

TEST(PeerCpuSeconds, IsTheReportsCpuSecondsWhenThereIsOne) {
  EXPECT_FALSE(detail::PeerCpuSeconds(std::nullopt));
  EXPECT_FALSE(detail::PeerCpuSeconds(nlohmann::json{{"bytes", 1}}));
  EXPECT_FALSE(detail::PeerCpuSeconds(nlohmann::json{{"cpu_seconds", -1.0}}));
  EXPECT_EQ(detail::PeerCpuSeconds(nlohmann::json{{"cpu_seconds", 0.25}}), 0.25);
}

}  // namespace
}  // namespace rail::probe
