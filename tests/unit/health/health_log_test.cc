// HealthLog logs a verdict when it changes, never twice for the same verdict.
#include <gmock/gmock.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "rail/health/checks.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Captures what spdlog's default logger writes while the test runs.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
    sink->set_pattern("%l %v");
    auto logger = std::make_shared<spdlog::logger>("health_log_test", sink);
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }

  // What was logged since the last call.
  std::string Take() {
    std::string text = stream_.str();
    stream_.str("");
    return text;
  }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::logger> previous_;
};

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
