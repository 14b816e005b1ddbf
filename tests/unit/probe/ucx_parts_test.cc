// Parts of the UCX side that need no peer: request bookkeeping and the context's settings.
#include <gtest/gtest.h>

#include "probe/ucx/context.h"
#include "probe/ucx/requests.h"

namespace rail::probe {
namespace {

TEST(OperationTracker, CountsWhatASendCallReturned) {
  OperationTracker tracker;
  // Completed in place: UCX calls no callback, so Track completes it.
  EXPECT_TRUE(tracker.Track(nullptr));
  EXPECT_EQ(tracker.completed, 1u);
  EXPECT_EQ(tracker.failed, 0u);
  // Failed at once.
  EXPECT_FALSE(tracker.Track(UCS_STATUS_PTR(UCS_ERR_CANCELED)));
  EXPECT_FALSE(tracker.Track(UCS_STATUS_PTR(UCS_ERR_NO_MEMORY)));
  EXPECT_EQ(tracker.completed, 3u);
  EXPECT_EQ(tracker.failed, 2u);
  EXPECT_EQ(tracker.first_error, UCS_ERR_CANCELED) << "the first error is kept";
  // In flight: the callback completes it later.
  int request = 0;
  EXPECT_TRUE(tracker.Track(&request));
  EXPECT_EQ(tracker.completed, 3u);
}

TEST(OperationTracker, SendParamHandsTheTrackerToTheCallback) {
  OperationTracker tracker;
  const ucp_request_param_t param = tracker.SendParam();
  EXPECT_EQ(param.user_data, &tracker);
  ASSERT_NE(param.cb.send, nullptr);
  EXPECT_NE(param.op_attr_mask & UCP_OP_ATTR_FIELD_CALLBACK, 0u);
  EXPECT_NE(param.op_attr_mask & UCP_OP_ATTR_FIELD_USER_DATA, 0u);
}

// extra_config comes last, by key (a std::map), so that it may override the fields.
TEST(UcxSettings, TheSpecsFieldsComeFirstAndExtraSettingsLoseTheirPrefix) {
  UcxContextSpec spec;
  spec.net_devices = {"mlx5_0:1", "mlx5_1:1"};
  spec.transports = "rc_x";
  spec.max_rndv_rails = 2;
  spec.extra_config = {{"UCX_MAX_EAGER_RAILS", "2"}, {"TLS", "tcp"}};
  using Settings = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(detail::UcxSettings(spec), (Settings{{"NET_DEVICES", "mlx5_0:1,mlx5_1:1"},
                                                 {"TLS", "rc_x"},
                                                 {"MAX_RNDV_RAILS", "2"},
                                                 {"TLS", "tcp"},
                                                 {"MAX_EAGER_RAILS", "2"}}));
  // Empty devices and transports leave UCX's own.
  EXPECT_EQ(detail::UcxSettings(UcxContextSpec{}), (Settings{{"MAX_RNDV_RAILS", "1"}}));
}

}  // namespace
}  // namespace rail::probe
