// HealthLog logs a verdict when it changes, never twice for the same verdict.
#include <gmock/gmock.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "rail/health/checks.h"
#include "support/captured_log.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

using CapturedLog = rail::test::CapturedLog;

CheckResult Ok(const std::string& check, const std::string& rail) {
  return {check, rail, "", true, ""};
}
CheckResult Failing(const std::string& check, const std::string& rail, const std::string& why) {
  return {check, rail, "", false, why};
}

TEST(HealthLogTest, FirstEvaluationLogsOnlyFailures) {
  CapturedLog log;
  HealthLog health;
  health.Observe({Ok("port_active", "rail0"), Failing("roce_gid", "rail0", "no GID")});
  EXPECT_EQ(log.Take(),
            "warning check changed check=roce_gid rail=rail0 peer= ok=false reason=\"no GID\"\n");
}

TEST(HealthLogTest, LogsChangesOnlyOnce) {
  CapturedLog log;
  HealthLog health;
  health.Observe({Ok("roce_gid", "rail0")});
  EXPECT_THAT(log.Take(), IsEmpty());
  health.Observe({Failing("roce_gid", "rail0", "no GID")});
  EXPECT_THAT(log.Take(), HasSubstr("check=roce_gid rail=rail0 peer= ok=false reason=\"no GID\""));
  health.Observe({Failing("roce_gid", "rail0", "no GID")});
  EXPECT_THAT(log.Take(), IsEmpty()) << "an unchanged failure is not logged again";
  health.Observe({Failing("roce_gid", "rail0", "GIDs on bond0")});
  EXPECT_THAT(log.Take(), HasSubstr("reason=\"GIDs on bond0\"")) << "a new reason is a change";
  health.Observe({Ok("roce_gid", "rail0")});
  EXPECT_EQ(log.Take(), "info check changed check=roce_gid rail=rail0 peer= ok=true reason=\"\"\n");
  health.Observe({Ok("roce_gid", "rail0")});
  EXPECT_THAT(log.Take(), IsEmpty());
}

TEST(HealthLogTest, VerdictsAreKeyedByPeerToo) {
  CapturedLog log;
  HealthLog health;
  health.Observe({{"peer_version", "", "b", true, ""}, {"peer_version", "", "c", true, ""}});
  health.Observe({{"peer_version", "", "b", true, ""}, {"peer_version", "", "c", false, "old"}});
  const auto text = log.Take();
  EXPECT_THAT(text, HasSubstr("peer=c ok=false"));
  EXPECT_EQ(text.find("peer=b"), std::string::npos) << text;
}

TEST(HealthLogTest, AVerdictThatReturnsFailingIsLoggedAgain) {
  CapturedLog log;
  HealthLog health;
  health.Observe({Failing("mtu", "rail1", "1500")});
  EXPECT_THAT(log.Take(), HasSubstr("check=mtu"));
  health.Observe({});  // the rail went away
  EXPECT_THAT(log.Take(), IsEmpty());
  health.Observe({Failing("mtu", "rail1", "1500")});
  EXPECT_THAT(log.Take(), HasSubstr("check=mtu"));
}

}  // namespace
}  // namespace rail::health::test
