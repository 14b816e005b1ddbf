// The result store: series by key, counts, the RTT histogram, busy counts, withdrawal, currency.
#include "rail/probe/result_store.h"

#include <gtest/gtest.h>

#include "support/fake_clock.h"

namespace rail::probe {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

ProbeResult Result(const std::string& rail, bool success, const base::Clock& clock) {
  ProbeResult result;
  result.kind = ProbeKind::kTcpRtt;
  result.peer = "b";
  result.rails = {rail};
  result.message_size_bytes = 8;
  result.success = success;
  if (!success) result.error_reason = "timeout";
  result.finished_at = clock.WallNow();
  return result;
}

TEST(ResultStoreTest, CountsRunsAndFailuresBySeries) {
  test::FakeClock clock;
  ResultStore store(clock);
  store.Record(Result("rail0", true, clock), minutes(1));
  store.Record(Result("rail0", false, clock), minutes(1));
  store.Record(Result("rail1", true, clock), minutes(1));
  const auto series = store.Snapshot();
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].key.rail, "rail0");
  EXPECT_EQ(series[0].runs, 2u);
  EXPECT_EQ(series[0].errors_by_reason.at("timeout"), 1u);
  EXPECT_FALSE(series[0].last.success);  // the latest result
  EXPECT_EQ(series[1].runs, 1u);
  EXPECT_TRUE(series[1].errors_by_reason.empty());
}

TEST(ResultStoreTest, MessageSizesAndStreamCountsAreSeriesOfTheirOwn) {
  test::FakeClock clock;
  ResultStore store(clock);
  auto one = Result("rail0", true, clock);
  auto other_size = one;
  other_size.message_size_bytes = 4096;
  auto other_streams = one;
  other_streams.streams = 4;
  for (const auto& result : {one, other_size, other_streams}) store.Record(result, minutes(1));
  EXPECT_EQ(store.SeriesCount(), 3u);
}

TEST(ResultStoreTest, BinsRttSamplesAndDropsThemFromTheKeptResult) {
  test::FakeClock clock;
  ResultStore store(clock);
  auto result = Result("rail0", true, clock);
  const double fastest = store.rtt_buckets().front() / 2;
  const double beyond = store.rtt_buckets().back() * 2;
  result.rtt_samples_seconds = {fastest, fastest, beyond};
  store.Record(result, minutes(1));
  const auto state = store.Snapshot().at(0);
  EXPECT_EQ(state.rtt_count, 3u);
  EXPECT_DOUBLE_EQ(state.rtt_sum_seconds, 2 * fastest + beyond);
  EXPECT_EQ(state.rtt_bucket_counts.front(), 2u);
  // Beyond the last bound a sample counts in +Inf only, i.e. in rtt_count alone.
  std::uint64_t binned = 0;
  for (const auto count : state.rtt_bucket_counts) binned += count;
  EXPECT_EQ(binned, 2u);
  EXPECT_TRUE(state.last.rtt_samples_seconds.empty());
}

TEST(ResultStoreTest, ABusyRefusalIsCountedApartAndLeavesTheSeriesAlone) {
  test::FakeClock clock;
  ResultStore store(clock);
  store.Record(Result("rail0", true, clock), minutes(1));
  auto busy = Result("rail0", false, clock);
  busy.error_reason = "busy";
  store.RecordBusy(busy);
  store.RecordBusy(busy);
  const auto series = store.Snapshot();
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].runs, 1u);
  EXPECT_TRUE(series[0].last.success);
  const auto counts = store.BusyCounts();
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts.begin()->first.rail, "rail0");
  EXPECT_EQ(counts.begin()->second, 2u);
}

TEST(ResultStoreTest, RetainWithdrawsSeriesAndBusyCountsItRefuses) {
  test::FakeClock clock;
  ResultStore store(clock);
  store.Record(Result("rail0", true, clock), minutes(1));
  store.Record(Result("rail1", true, clock), minutes(1));
  auto busy = Result("rail1", false, clock);
  busy.error_reason = "busy";
  store.RecordBusy(busy);
  store.Retain([](const std::string& kind, const std::string& peer, const std::string& rail) {
    return kind == "tcp_rtt" && peer == "b" && rail == "rail0";
  });
  const auto series = store.Snapshot();
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].key.rail, "rail0");
  EXPECT_TRUE(store.BusyCounts().empty());
  // A series that comes back starts from zero: its counters were withdrawn with it.
  store.Record(Result("rail1", true, clock), minutes(1));
  EXPECT_EQ(store.Snapshot().at(1).runs, 1u);
}

TEST(ResultStoreTest, AResultIsCurrentForThreeIntervalsOfTheInjectedClock) {
  test::FakeClock clock;
  ResultStore store(clock);
  store.Record(Result("rail0", true, clock), minutes(1));
  clock.Advance(minutes(3));
  EXPECT_TRUE(store.IsCurrent(store.Snapshot().at(0)));
  clock.Advance(seconds(1));
  EXPECT_FALSE(store.IsCurrent(store.Snapshot().at(0)));
}

TEST(ResultStoreTest, AOneOffRunIsAlwaysCurrent) {
  test::FakeClock clock;
  ResultStore store(clock);
  store.Record(Result("rail0", true, clock), std::chrono::milliseconds(0));
  clock.Advance(std::chrono::hours(24));
  EXPECT_TRUE(store.IsCurrent(store.Snapshot().at(0)));
}

ProbeResult Failed(const std::string& reason, const std::string& message,
                   const base::Clock& clock) {
  auto result = Result("rail0", false, clock);
  result.error_reason = reason;
  result.error_message = message;
  return result;
}

TEST(ResultStoreTest, CountsFailedRunsInARowAndKeepsTheLatestFailure) {
  test::FakeClock clock;
  ResultStore store(clock);
  store.Record(Result("rail0", true, clock), minutes(1));
  EXPECT_EQ(store.Snapshot().at(0).consecutive_failures, 0u);
  store.Record(Failed("timeout", "first", clock), minutes(1));
  EXPECT_EQ(store.Snapshot().at(0).consecutive_failures, 1u);
  store.Record(Failed("worker_crashed", "second", clock), minutes(1));
  store.Record(Failed("worker_crashed", "third", clock), minutes(1));
  const auto state = store.Snapshot().at(0);
  EXPECT_EQ(state.consecutive_failures, 3u);
  EXPECT_EQ(state.last_failure_reason, "worker_crashed");
  EXPECT_EQ(state.last_failure_message, "third");
}

TEST(ResultStoreTest, ASuccessEndsTheFailuresInARow) {
  test::FakeClock clock;
  ResultStore store(clock);
  store.Record(Failed("timeout", "", clock), minutes(1));
  store.Record(Failed("timeout", "", clock), minutes(1));
  store.Record(Result("rail0", true, clock), minutes(1));
  EXPECT_EQ(store.Snapshot().at(0).consecutive_failures, 0u);
  store.Record(Failed("timeout", "", clock), minutes(1));
  EXPECT_EQ(store.Snapshot().at(0).consecutive_failures, 1u);
}

TEST(ResultStoreTest, RunsThatSayNothingAboutTheRailNeitherCountNorReset) {
  test::FakeClock clock;
  ResultStore store(clock);
  store.Record(Failed("worker_crashed", "UCX aborted", clock), minutes(1));
  store.Record(Failed("worker_unavailable", "no worker", clock), minutes(1));
  store.Record(Failed("cancelled", "probe cancelled", clock), minutes(1));
  store.RecordBusy(Failed(kBusyReason, "busy", clock));
  const auto state = store.Snapshot().at(0);
  EXPECT_EQ(state.consecutive_failures, 1u);
  EXPECT_EQ(state.last_failure_reason, "worker_crashed");
  EXPECT_EQ(state.last_failure_message, "UCX aborted");
  EXPECT_EQ(state.runs, 3u);  // still runs of the series, counted by reason
}

}  // namespace
}  // namespace rail::probe
