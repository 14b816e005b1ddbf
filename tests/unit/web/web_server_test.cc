#include "rail/web/web_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "unit/web/bcrypt_hash.h"
#include "unit/web/http_client.h"

namespace rail::web {
namespace {

using ::testing::HasSubstr;

class OneGauge final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    ++scrapes;
    prometheus::MetricFamily family;
    family.name = "rail_test_value";
    family.help = "A value for the test.";
    family.type = prometheus::MetricType::Gauge;
    family.metric.emplace_back();
    family.metric.back().gauge.value = 42;
    return {family};
  }
  mutable std::atomic<int> scrapes{0};
};

using testing::Get;

TEST(ListenAddressTest, NodeExporterSpellings) {
  EXPECT_EQ(ParseListenAddress(":9840").host, "");
  EXPECT_EQ(ParseListenAddress(":9840").port, 9840);
  EXPECT_EQ(ParseListenAddress("127.0.0.1:0").host, "127.0.0.1");
  EXPECT_EQ(ParseListenAddress("localhost:9840").host, "127.0.0.1");
  EXPECT_EQ(ParseListenAddress("[::1]:9840").host, "::1");
  EXPECT_THROW(ParseListenAddress("9840"), WebError);
  EXPECT_THROW(ParseListenAddress(":99999"), WebError);
  EXPECT_THROW(ParseListenAddress("host:port"), WebError);
  EXPECT_THROW(ParseListenAddress("a b:1"), WebError);
}

TEST(ListenAddressTest, AHostNameIsNotAnAddressToListenOn) {
  WebOptions options;
  options.listen_addresses = {"example.invalid:0"};
  try {
    WebServer server(options, std::make_shared<OneGauge>(), [] { return std::string(); });
    FAIL() << "a host name must be refused";
  } catch (const WebError& error) {
    EXPECT_THAT(error.what(), HasSubstr("not an IP address"));
  }
}

class WebServerTest : public ::testing::Test {};

TEST_F(WebServerTest, ServesMetricsAndLandingPage) {
  auto metrics = std::make_shared<OneGauge>();
  WebOptions options;
  options.listen_addresses = {"127.0.0.1:0"};
  WebServer server(options, metrics, [] { return std::string("<p>rails here</p>"); });
  ASSERT_EQ(server.ListeningPorts().size(), 1u);
  const int port = server.ListeningPorts().front();
  ASSERT_GT(port, 0);

  const auto scrape = Get(port, "/metrics");
  EXPECT_EQ(scrape.status, 200);
  EXPECT_THAT(scrape.body, HasSubstr("rail_test_value 42"));
  EXPECT_EQ(metrics->scrapes.load(), 1);

  const auto landing = Get(port, "/");
  EXPECT_EQ(landing.status, 200);
  EXPECT_EQ(landing.body, "<p>rails here</p>");

  EXPECT_EQ(Get(port, "/nothing-here").status, 404);
}

TEST_F(WebServerTest, CustomTelemetryPath) {
  auto metrics = std::make_shared<OneGauge>();
  WebOptions options;
  options.listen_addresses = {"127.0.0.1:0"};
  options.telemetry_path = "/rail/metrics";
  WebServer server(options, metrics, [] { return std::string("landing"); });
  const int port = server.ListeningPorts().front();
  EXPECT_THAT(Get(port, "/rail/metrics").body, HasSubstr("rail_test_value 42"));
  EXPECT_EQ(Get(port, "/metrics").status, 404);
}

TEST_F(WebServerTest, TakenPortIsAClearError) {
  auto metrics = std::make_shared<OneGauge>();
  WebOptions options;
  options.listen_addresses = {"127.0.0.1:0"};
  WebServer first(options, metrics, [] { return std::string(); });
  options.listen_addresses = {"127.0.0.1:" + std::to_string(first.ListeningPorts().front())};
  try {
    WebServer second(options, metrics, [] { return std::string(); });
    FAIL() << "binding a taken port must fail";
  } catch (const WebError& error) {
    EXPECT_THAT(error.what(), HasSubstr("cannot listen on 127.0.0.1:"));
  }
}

TEST_F(WebServerTest, RejectsBadOptions) {
  auto metrics = std::make_shared<OneGauge>();
  WebOptions options;
  options.listen_addresses = {};
  EXPECT_THROW(WebServer(options, metrics, [] { return std::string(); }), WebError);
  options.listen_addresses = {"127.0.0.1:0"};
  options.telemetry_path = "metrics";
  EXPECT_THROW(WebServer(options, metrics, [] { return std::string(); }), WebError);
}

TEST_F(WebServerTest, HealthPathsAnswerWithoutCredentials) {
  const std::string hash = rail::testing::Bcrypt("secret");
  ASSERT_FALSE(hash.empty());
  const std::filesystem::path config =
      std::filesystem::path(::testing::TempDir()) / "health_web_config.yml";
  std::ofstream(config) << "basic_auth_users:\n  alice: '" << hash << "'\n";
  std::atomic<bool> started{false};
  WebOptions options;
  options.listen_addresses = {"127.0.0.1:0"};
  options.config_file = config.string();
  options.is_ready = [&started] { return started.load(); };
  WebServer server(options, std::make_shared<OneGauge>(), [] { return std::string("landing"); });
  const int port = server.ListeningPorts().front();

  EXPECT_EQ(Get(port, "/metrics").status, 401);
  EXPECT_EQ(Get(port, "/").status, 401);
  const auto healthy = Get(port, kHealthyPath);
  EXPECT_EQ(healthy.status, 200);
  EXPECT_EQ(healthy.body, "OK\n");
  const auto starting = Get(port, kReadyPath);
  EXPECT_EQ(starting.status, 503);
  EXPECT_EQ(starting.body, "Starting\n");
  started = true;
  EXPECT_EQ(Get(port, kReadyPath).status, 200);
  EXPECT_EQ(Get(port, kReadyPath, "HEAD").status, 200);
  EXPECT_EQ(Get(port, kHealthyPath, "POST").status, 405);
  // Only the exact paths skip authentication.
  EXPECT_EQ(Get(port, "/-/healthy/../metrics").status, 401);
  EXPECT_EQ(Get(port, "/-/readyz").status, 401);
  std::filesystem::remove(config);
}

TEST_F(WebServerTest, ReadyAtOnceWithoutAReadinessSignal) {
  WebOptions options;
  options.listen_addresses = {"127.0.0.1:0"};
  WebServer server(options, std::make_shared<OneGauge>(), [] { return std::string(); });
  EXPECT_EQ(Get(server.ListeningPorts().front(), kReadyPath).status, 200);
}

}  // namespace
}  // namespace rail::web
