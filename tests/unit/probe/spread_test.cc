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

// A steady 1000 bytes per millisecond for a second, read every `step` ms, messages of `unit`.
IntervalRecorder Steady(std::uint64_t unit, int step = 1) {
  const IntervalRecorder::Clock::time_point start{};
  IntervalRecorder recorder(start, milliseconds(1000), unit);
  for (int ms = step; ms <= 1000; ms += step) {
    recorder.Observe(start + milliseconds(ms), static_cast<std::uint64_t>(ms) * 1000);
  }
  return recorder;
}

TEST(SpreadTest, TenEqualIntervalsOfASteadyRun) {
  const auto recorder = Steady(1000);  // 1000 completions
  EXPECT_EQ(recorder.Intervals(), 10u);
  const auto rates = recorder.Rates();
  ASSERT_EQ(rates.size(), 10u);
  for (const double rate : rates) EXPECT_DOUBLE_EQ(rate, 1e6);
  EXPECT_DOUBLE_EQ(SpreadOf(rates)->cv, 0);
}

TEST(SpreadTest, FewCompletionsGetFewerIntervals) {
  // 1 MB in 40 messages of 25 kB: five intervals of eight messages each.
  EXPECT_EQ(Steady(25'000).Intervals(), 5u);
  EXPECT_EQ(Steady(25'000).Rates().size(), 5u);
  // Twelve messages: one interval of eight, so no spread at all.
  EXPECT_EQ(Steady(1'000'000 / 12).Intervals(), 1u);
  EXPECT_TRUE(Steady(1'000'000 / 12).Rates().empty());
}

TEST(SpreadTest, ABurstyRunHasAHighSpread) {
  const IntervalRecorder::Clock::time_point start{};
  IntervalRecorder recorder(start, milliseconds(1000), 100);
  std::uint64_t bytes = 0;
  for (int ms = 1; ms <= 1000; ++ms) {
    // Nothing completes in the first half of every 200 ms.
    if (ms % 200 >= 100 || ms % 200 == 0) bytes += 2000;
    recorder.Observe(start + milliseconds(ms), bytes);
  }
  const auto spread = SpreadOf(recorder.Rates());
  ASSERT_TRUE(spread);
  EXPECT_GT(spread->cv, 0.9);
  EXPECT_LT(spread->min_bytes_per_second, 0.05 * spread->max_bytes_per_second);
}

TEST(SpreadTest, ReadingsCloserThanTheSpacingKeepTheLatest) {
  // Read every 1 ms of a 10 s run: one reading kept per 10 ms, the rates still exact.
  const IntervalRecorder::Clock::time_point start{};
  IntervalRecorder recorder(start, milliseconds(10'000), 1000);
  for (int ms = 1; ms <= 10'000; ++ms) {
    recorder.Observe(start + milliseconds(ms), static_cast<std::uint64_t>(ms) * 1000);
  }
  const auto rates = recorder.Rates();
  ASSERT_EQ(rates.size(), 10u);
  for (const double rate : rates) EXPECT_NEAR(rate, 1e6, 1e6 * 0.02);
  EXPECT_EQ(recorder.Rates(3).size(), 3u);
  EXPECT_TRUE(IntervalRecorder().Rates(5).empty());
}

}  // namespace
}  // namespace rail::probe
