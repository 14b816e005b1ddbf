#include "rail/fleet/discovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <deque>
#include <sstream>

#include "support/captured_log.h"
#include "support/fake_clock.h"

namespace rail::fleet {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using CapturedLog = rail::test::CapturedLog;

// Answers with the results a test queued, one per Fetch; counts the fetches.
class FakeSource final : public Source {
 public:
  struct State {
    std::deque<FetchResult> results;
    int fetches = 0;
  };
  FakeSource(std::string name, base::Duration interval, std::shared_ptr<State> state)
      : name_(std::move(name)), interval_(interval), state_(std::move(state)) {}
  std::string Name() const override { return name_; }
  base::Duration RefreshInterval() const override { return interval_; }
  FetchResult Fetch(const base::Clock& /*clock*/, const std::atomic<bool>& /*abandon*/) override {
    ++state_->fetches;
    if (state_->results.empty()) return FetchResult{std::nullopt, "nothing queued"};
    FetchResult result = state_->results.front();
    state_->results.pop_front();
    return result;
  }

 private:
  std::string name_;
  base::Duration interval_;
  std::shared_ptr<State> state_;
};

FetchResult Good(std::vector<std::string> addresses) {
  std::vector<Target> targets;
  for (auto& address : addresses) targets.push_back({std::move(address), {}});
  return FetchResult{std::move(targets), {}};
}
FetchResult Bad(std::string error) {
  return FetchResult{std::nullopt, std::move(error)};
}

std::vector<std::string> Addresses(const std::vector<Target>& targets) {
  std::vector<std::string> addresses;
  for (const auto& target : targets) addresses.push_back(target.address);
  return addresses;
}

class DiscoveryTest : public ::testing::Test {
 protected:
  std::shared_ptr<FakeSource::State> Add(std::string name, base::Duration interval) {
    auto state = std::make_shared<FakeSource::State>();
    sources_.push_back(std::make_unique<FakeSource>(std::move(name), interval, state));
    return state;
  }
  Discovery Make() { return Discovery(std::move(sources_), clock_); }

  test::FakeClock clock_;
  std::vector<std::unique_ptr<Source>> sources_;
};

TEST_F(DiscoveryTest, FirstRefreshFetchesEverySourceAndMerges) {
  auto file = Add("file_sd:a", seconds(30));
  auto dns = Add("dns:b", seconds(60));
  file->results = {Good({"c:1", "a:1"})};
  dns->results = {Good({"b:1", "a:1"})};
  Discovery discovery = Make();
  EXPECT_TRUE(discovery.Targets().empty());
  EXPECT_TRUE(discovery.Refresh());
  EXPECT_EQ(Addresses(discovery.Targets()), (std::vector<std::string>{"a:1", "b:1", "c:1"}));
  const auto status = discovery.Status();
  ASSERT_EQ(status.size(), 2u);
  EXPECT_EQ(status[0].name, "file_sd:a");
  EXPECT_EQ(status[0].targets, 2u);
  EXPECT_TRUE(status[0].healthy);
  EXPECT_EQ(status[0].refreshes, 1u);
  EXPECT_EQ(status[0].failures, 0u);
  EXPECT_EQ(status[0].last_success, clock_.WallNow());
  EXPECT_EQ(status[1].name, "dns:b");
}

TEST_F(DiscoveryTest, FetchesOnlyDueSources) {
  auto fast = Add("fast", seconds(10));
  auto slow = Add("slow", seconds(60));
  fast->results = {Good({"a:1"}), Good({"a:1"}), Good({"a:1"})};
  slow->results = {Good({"b:1"}), Good({"b:1"})};
  Discovery discovery = Make();
  discovery.Refresh();
  EXPECT_EQ(discovery.NextRefresh(), clock_.Now() + seconds(10));

  clock_.Advance(seconds(5));
  EXPECT_FALSE(discovery.Refresh());  // nothing due
  EXPECT_EQ(fast->fetches, 1);
  clock_.Advance(seconds(5));
  EXPECT_FALSE(discovery.Refresh());  // same targets: no change
  EXPECT_EQ(fast->fetches, 2);
  EXPECT_EQ(slow->fetches, 1);
  clock_.Advance(seconds(50));
  discovery.Refresh();
  EXPECT_EQ(fast->fetches, 3);
  EXPECT_EQ(slow->fetches, 2);
}

TEST_F(DiscoveryTest, FailureKeepsLastGoodListAndCounts) {
  auto source = Add("dns:peers", seconds(30));
  source->results = {Good({"a:1", "b:1"}), Bad("timeout"), Bad("timeout"), Good({"a:1"})};
  Discovery discovery = Make();
  discovery.Refresh();
  const auto first_success = discovery.Status()[0].last_success;

  clock_.Advance(seconds(30));
  EXPECT_FALSE(discovery.Refresh());
  EXPECT_EQ(Addresses(discovery.Targets()), (std::vector<std::string>{"a:1", "b:1"}));
  auto status = discovery.Status()[0];
  EXPECT_FALSE(status.healthy);
  EXPECT_EQ(status.targets, 2u);
  EXPECT_EQ(status.last_error, "timeout");
  EXPECT_EQ(status.refreshes, 2u);
  EXPECT_EQ(status.failures, 1u);
  EXPECT_EQ(status.last_success, first_success);

  clock_.Advance(seconds(30));
  discovery.Refresh();
  EXPECT_EQ(discovery.Status()[0].failures, 2u);

  clock_.Advance(seconds(30));
  EXPECT_TRUE(discovery.Refresh());
  EXPECT_EQ(Addresses(discovery.Targets()), (std::vector<std::string>{"a:1"}));
  status = discovery.Status()[0];
  EXPECT_TRUE(status.healthy);
  EXPECT_EQ(status.last_error, "timeout");  // kept after the success
  EXPECT_EQ(status.refreshes, 4u);
  EXPECT_EQ(status.failures, 2u);
  EXPECT_EQ(status.last_success, clock_.WallNow());
}

TEST_F(DiscoveryTest, LogsAFailureOncePerChangeNamingTheSource) {
  auto source = Add("dns:peers.example", seconds(1));
  source->results = {Good({"a:1"}),   Bad("timeout"), Bad("timeout"),
                     Bad("SERVFAIL"), Good({"a:1"}),  Bad("timeout")};
  Discovery discovery = Make();
  CapturedLog log;
  const auto refresh = [&] {
    discovery.Refresh();
    clock_.Advance(seconds(1));
    return log.Take();
  };
  EXPECT_THAT(refresh(), IsEmpty());
  const std::string first = refresh();
  EXPECT_THAT(first, HasSubstr("warning fleet discovery: dns:peers.example: refresh failed"));
  EXPECT_THAT(first, HasSubstr("timeout"));
  EXPECT_THAT(refresh(), IsEmpty());  // the same failure again
  EXPECT_THAT(refresh(), HasSubstr("SERVFAIL"));
  EXPECT_THAT(refresh(), HasSubstr("info fleet discovery: dns:peers.example: recovered"));
  EXPECT_THAT(refresh(), HasSubstr("timeout"));  // after a success, news again
  EXPECT_EQ(discovery.Status()[0].failures, 4u);
}

TEST_F(DiscoveryTest, SourceThatNeverSucceededContributesNothing) {
  auto broken = Add("file_sd:missing", seconds(30));
  auto good = Add("static", seconds(30));
  broken->results = {Bad("no such file")};
  good->results = {Good({"a:1"})};
  Discovery discovery = Make();
  EXPECT_TRUE(discovery.Refresh());
  EXPECT_EQ(Addresses(discovery.Targets()), (std::vector<std::string>{"a:1"}));
  const auto status = discovery.Status();
  EXPECT_FALSE(status[0].healthy);
  EXPECT_EQ(status[0].targets, 0u);
  EXPECT_FALSE(status[0].last_success.has_value());
  EXPECT_TRUE(status[1].healthy);
}

TEST_F(DiscoveryTest, FailedSourceIsRetriedOnItsInterval) {
  auto source = Add("dns:peers", seconds(30));
  source->results = {Bad("servfail"), Good({"a:1"})};
  Discovery discovery = Make();
  EXPECT_FALSE(discovery.Refresh());
  EXPECT_EQ(discovery.NextRefresh(), clock_.Now() + seconds(30));
  clock_.Advance(seconds(29));
  discovery.Refresh();
  EXPECT_EQ(source->fetches, 1);
  clock_.Advance(seconds(1));
  EXPECT_TRUE(discovery.Refresh());
  EXPECT_EQ(source->fetches, 2);
}

TEST_F(DiscoveryTest, NoSources) {
  Discovery discovery = Make();
  EXPECT_FALSE(discovery.NextRefresh().has_value());
  EXPECT_FALSE(discovery.Refresh());
  EXPECT_TRUE(discovery.Targets().empty());
  EXPECT_TRUE(discovery.Status().empty());
}

TEST_F(DiscoveryTest, NextRefreshIsNowBeforeTheFirstFetch) {
  Add("a", seconds(30));
  Discovery discovery = Make();
  EXPECT_EQ(discovery.NextRefresh(), clock_.Now());
}

// A refresh the agent's stop cut short records nothing: no failure counted, no list replaced.
TEST_F(DiscoveryTest, AnAbandonedRefreshRecordsNothing) {
  auto dns = Add("dns:b", seconds(60));
  dns->results = {Bad("peers.test: cancelled")};
  Discovery discovery = Make();
  const std::atomic<bool> abandon{true};
  EXPECT_FALSE(discovery.Refresh(abandon));
  EXPECT_EQ(discovery.Status()[0].refreshes, 0u);
  EXPECT_EQ(discovery.Status()[0].failures, 0u);
  EXPECT_EQ(discovery.NextRefresh(), clock_.Now());  // still due: fetched again at the next start
}

TEST(StaticSource, AlwaysItsTargets) {
  const std::vector<Target> targets = {{"b:1", {}}, {"a:1", {{"rails", "rail0"}}}};
  auto source = MakeStaticSource(targets);
  EXPECT_EQ(source->Name(), "static");
  EXPECT_GT(source->RefreshInterval(), base::Duration::zero());
  for (int i = 0; i < 2; ++i) {
    const auto result = source->Fetch(base::SystemClock());
    ASSERT_TRUE(result.targets.has_value());
    EXPECT_EQ(*result.targets, targets);
  }
}

}  // namespace
}  // namespace rail::fleet
