// rail_exporter probe's retries of a refused run, on a recording sleep: the waits are the
// scheduler's policy (the hint, at least one second, stretched by up to half), and bounded.
#include "rail/commands/refused_retry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace rail::commands {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

// Answers each run with the next of `answers` (the last one again once they run out).
class ScriptedProbe : public probe::Probe {
 public:
  explicit ScriptedProbe(std::vector<probe::ProbeResult> answers) : answers_(std::move(answers)) {}
  probe::ProbeKind kind() const override { return probe::ProbeKind::kUcxThroughput; }
  probe::ProbeResult Run(const probe::ProbeParams&, const probe::ProbeContext&) override {
    ++runs;
    return answers_[std::min(runs, answers_.size()) - 1];
  }
  std::size_t runs = 0;

 private:
  std::vector<probe::ProbeResult> answers_;
};

probe::ProbeResult Refusal(const char* reason, milliseconds hint) {
  probe::ProbeResult result;
  result.kind = probe::ProbeKind::kUcxThroughput;
  result.error_reason = reason;
  result.retry_after = hint;
  return result;
}

probe::ProbeResult Success() {
  probe::ProbeResult result;
  result.kind = probe::ProbeKind::kUcxThroughput;
  result.success = true;
  return result;
}

class RefusedRetryTest : public ::testing::Test {
 protected:
  RefusedRetryTest() {
    retry_.random.seed(7);
    retry_.sleep = [this](base::Duration wait) { waits_.push_back(wait); };
    params_.kind = probe::ProbeKind::kUcxThroughput;
    params_.message_sizes_bytes = {1 << 20};
  }

  RefusedRetry retry_;
  std::vector<base::Duration> waits_;
  probe::ProbeParams params_;
  probe::ProbeContext context_;
  std::ostringstream err_;
};

TEST_F(RefusedRetryTest, BusyRunsAreRetriedAfterTheHintStretchedByUpToHalf) {
  ScriptedProbe probe({Refusal(probe::kBusyReason, seconds(3)),
                       Refusal(probe::kBusyReason, seconds(3)), Success()});
  const auto results = RunRetryingRefusals(probe, params_, context_, retry_, err_);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].success);
  EXPECT_EQ(probe.runs, 3u);
  ASSERT_EQ(waits_.size(), 2u);
  for (const auto wait : waits_) {
    EXPECT_GE(wait, seconds(3));
    EXPECT_LE(wait, milliseconds(4500));
  }
  EXPECT_THAT(err_.str(), HasSubstr("busy with another bulk transfer; retrying in"));
  EXPECT_THAT(err_.str(), HasSubstr("(2 of 4)"));
}

TEST_F(RefusedRetryTest, ARateRefusalWithoutAHintWaitsAtLeastTheFloor) {
  ScriptedProbe probe({Refusal(probe::kRateReason, milliseconds(0)), Success()});
  RunRetryingRefusals(probe, params_, context_, retry_, err_);
  ASSERT_EQ(waits_.size(), 1u);
  EXPECT_GE(waits_[0], seconds(1));
  EXPECT_LE(waits_[0], milliseconds(1500));
  EXPECT_THAT(err_.str(), HasSubstr("rate limit refused the run"));
}

TEST_F(RefusedRetryTest, APeerThatKeepsRefusingIsReportedAfterTheLastAttempt) {
  ScriptedProbe probe({Refusal(probe::kBusyReason, seconds(2))});
  const auto results = RunRetryingRefusals(probe, params_, context_, retry_, err_);
  EXPECT_EQ(probe.runs, 5u);
  EXPECT_EQ(waits_.size(), 4u);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(probe::IsBusy(results[0]));
}

TEST_F(RefusedRetryTest, AFailureThatIsNoRefusalIsNotRetried) {
  probe::ProbeResult failed = Success();
  failed.success = false;
  failed.error_reason = "connect";
  ScriptedProbe probe({failed});
  RunRetryingRefusals(probe, params_, context_, retry_, err_);
  EXPECT_EQ(probe.runs, 1u);
  EXPECT_TRUE(waits_.empty());
}

}  // namespace
}  // namespace rail::commands
