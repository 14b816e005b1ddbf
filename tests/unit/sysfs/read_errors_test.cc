#include "rail/sysfs/read_errors.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace rail::sysfs {
namespace {

TEST(ReadFailureFromErrno, MapsKernelAnswers) {
  EXPECT_EQ(ReadFailureFromErrno(EINVAL), ReadFailure::kInvalidArgument);
  EXPECT_EQ(ReadFailureFromErrno(EACCES), ReadFailure::kPermissionDenied);
  EXPECT_EQ(ReadFailureFromErrno(EPERM), ReadFailure::kPermissionDenied);
  EXPECT_EQ(ReadFailureFromErrno(ENOENT), ReadFailure::kMissing);
  EXPECT_EQ(ReadFailureFromErrno(EIO), ReadFailure::kIoError);
  EXPECT_EQ(ReadFailureFromErrno(EOPNOTSUPP), ReadFailure::kIoError);
}

TEST(ReadFailureName, LabelValues) {
  EXPECT_STREQ(ReadFailureName(ReadFailure::kInvalidArgument), "invalid_argument");
  EXPECT_STREQ(ReadFailureName(ReadFailure::kPermissionDenied), "permission_denied");
  EXPECT_STREQ(ReadFailureName(ReadFailure::kIoError), "io_error");
  EXPECT_STREQ(ReadFailureName(ReadFailure::kMissing), "missing");
  EXPECT_STREQ(ReadFailureName(ReadFailure::kMalformed), "malformed");
}

TEST(ReadErrors, CollectsAndCounts) {
  ReadErrors errors;
  EXPECT_TRUE(errors.empty());
  errors.AddErrno("class/net/eth0/carrier", EINVAL);
  errors.AddErrno("class/net/eth0/speed", EINVAL);
  errors.AddErrno("class/infiniband/mlx5_0/ports/1/counters/symbol_error", EACCES);
  errors.Add("class/infiniband/mlx5_0/ports/1/rate", ReadFailure::kMalformed, "fast");
  EXPECT_FALSE(errors.empty());
  ASSERT_EQ(errors.problems().size(), 4u);
  EXPECT_EQ(errors.Count(ReadFailure::kInvalidArgument), 2u);
  EXPECT_EQ(errors.Count(ReadFailure::kPermissionDenied), 1u);
  EXPECT_EQ(errors.Count(ReadFailure::kMalformed), 1u);
  EXPECT_EQ(errors.Count(ReadFailure::kIoError), 0u);
  EXPECT_EQ(errors.problems()[0].path, "class/net/eth0/carrier");
  EXPECT_EQ(errors.problems()[0].detail, "Invalid argument");
  EXPECT_EQ(errors.problems()[3].detail, "fast");
}

}  // namespace
}  // namespace rail::sysfs
