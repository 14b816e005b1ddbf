#include "rail/probe/spread.h"

#include <gtest/gtest.h>

namespace rail::probe {
namespace {

using std::chrono::milliseconds;

TEST(SpreadTest, MinMaxMeanAndCoefficientOfVariation) {
  const auto spread = SpreadOf({8, 12, 8, 12});
  ASSERT_TRUE(spread);
  EXPECT_EQ(spread->intervals, 4u);
  EXPECT_DOUBLE_EQ(spread->min_bytes_per_second, 8);
  EXPECT_DOUBLE_EQ(spread->max_bytes_per_second, 12);
  EXPECT_DOUBLE_EQ(spread->mean_bytes_per_second, 10);
  EXPECT_DOUBLE_EQ(spread->cv, 0.2);  // deviation 2 over mean 10
}

TEST(SpreadTest, FewerThanTwoIntervalsHaveNoSpread) {
  EXPECT_FALSE(SpreadOf({}));
  EXPECT_FALSE(SpreadOf({5}));
  EXPECT_DOUBLE_EQ(SpreadOf({0, 0})->cv, 0);
}

TEST(SpreadTest, RailsMeasuredTogetherAddUpIntervalByInterval) {
  EXPECT_EQ(SumIntervalRates({{1, 2, 3}, {10, 20}}), (std::vector<double>{11, 22}));
  EXPECT_TRUE(SumIntervalRates({}).empty());
}

TEST(SpreadTest, TheRecorderCutsTheRunIntoTenthsAndLeavesThePartialLastOut) {
  const IntervalRecorder::Clock::time_point start{};
  IntervalRecorder recorder(start, milliseconds(1000));
  recorder.Observe(start + milliseconds(50), 100);  // within the first 100 ms
  EXPECT_TRUE(recorder.rates().empty());
  recorder.Observe(start + milliseconds(100), 1000);
  recorder.Observe(start + milliseconds(250), 4000);  // a late pass: 150 ms, 3000 bytes
  recorder.Observe(start + milliseconds(300), 9999);  // partial
  ASSERT_EQ(recorder.rates().size(), 2u);
  EXPECT_DOUBLE_EQ(recorder.rates()[0], 10000);
  EXPECT_DOUBLE_EQ(recorder.rates()[1], 20000);
}

TEST(SpreadTest, ShortRunsKeepIntervalsOfAtLeastFiftyMilliseconds) {
  const IntervalRecorder::Clock::time_point start{};
  IntervalRecorder recorder(start, milliseconds(100));
  recorder.Observe(start + milliseconds(20), 10);
  EXPECT_TRUE(recorder.rates().empty());
  recorder.Observe(start + milliseconds(50), 50);
  EXPECT_EQ(recorder.rates().size(), 1u);
}

}  // namespace
}  // namespace rail::probe
