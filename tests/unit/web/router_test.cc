#include "web/router.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include "unit/web/bcrypt_hash.h"

namespace rail::web::detail {
namespace {

using ::testing::HasSubstr;

HttpRequest Request(const std::string& method, const std::string& target,
                    const std::string& authorization = "") {
  HttpRequest request;
  request.method = method;
  request.target = target;
  request.has_authorization = !authorization.empty();
  request.authorization = authorization;
  return request;
}

class RouterTest : public ::testing::Test {
 protected:
  RouterTest() : metrics_(std::make_shared<prometheus::Registry>()) {
    prometheus::BuildGauge().Name("rail_test_value").Help("h").Register(*metrics_).Add({}).Set(42);
    routes_.telemetry_path = "/metrics";
    routes_.metrics = {metrics_};
    routes_.landing_page = [] { return std::string("<p>rails</p>"); };
  }

  Router Make() { return Router(routes_, counters_); }

  void WithAuth() {
    const std::string hash = rail::testing::Bcrypt("secret");
    ASSERT_FALSE(hash.empty());
    routes_.auth = std::make_shared<const BasicAuthChecker>(
        std::map<std::string, std::string>{{"alice", hash}});
    auto& failures = prometheus::BuildCounter().Name("failures").Register(*metrics_);
    counters_ = {&failures.Add({{"r", "missing"}}), &failures.Add({{"r", "malformed"}}),
                 &failures.Add({{"r", "invalid"}})};
  }

  std::shared_ptr<prometheus::Registry> metrics_;
  Routes routes_;
  AuthFailureCounters counters_;
};

TEST_F(RouterTest, ServesTheTelemetryPathAndTheLandingPage) {
  const Router router = Make();
  const HttpResponse metrics = router.Answer(Request("GET", "/metrics?debug=1"));
  EXPECT_EQ(metrics.status, 200);
  EXPECT_THAT(metrics.body, HasSubstr("rail_test_value 42"));
  EXPECT_THAT(metrics.content_type, HasSubstr("version=0.0.4"));
  EXPECT_EQ(metrics.content_encoding, "");
  const HttpResponse landing = router.Answer(Request("GET", "/"));
  EXPECT_EQ(landing.body, "<p>rails</p>");
  EXPECT_THAT(landing.content_type, HasSubstr("text/html"));
  EXPECT_EQ(router.Answer(Request("GET", "/metricsXYZ")).status, 404);
  EXPECT_EQ(router.Answer(Request("GET", "/metrics/x")).status, 404);
  EXPECT_EQ(router.Answer(Request("POST", "/metrics")).status, 405);
  EXPECT_EQ(router.Answer(Request("DELETE", "/")).status, 405);
}

TEST_F(RouterTest, GzipWhenTheScraperAcceptsIt) {
  const Router router = Make();
  HttpRequest request = Request("GET", "/metrics");
  request.accept_encoding = "gzip";
  const HttpResponse response = router.Answer(request);
  EXPECT_EQ(response.content_encoding, "gzip");
  EXPECT_EQ(response.body.substr(0, 2), std::string("\x1f\x8b"));
}

TEST_F(RouterTest, AuthenticationCoversEveryPathButHealth) {
  WithAuth();
  const Router router = Make();
  const HttpResponse refused = router.Answer(Request("GET", "/metrics"));
  EXPECT_EQ(refused.status, 401);
  ASSERT_EQ(refused.headers.size(), 1u);
  EXPECT_EQ(refused.headers[0].first, "WWW-Authenticate");
  EXPECT_EQ(router.Answer(Request("GET", "/")).status, 401);
  EXPECT_EQ(router.Answer(Request("POST", "/-/reload")).status, 401);
  EXPECT_EQ(router.Answer(Request("GET", "/-/healthy")).status, 200);
  EXPECT_EQ(router.Answer(Request("GET", "/-/ready")).status, 200);
  EXPECT_EQ(router.Answer(Request("GET", "/metrics", "Basic !!!")).status, 401);
  // alice:wrong, then alice:secret
  EXPECT_EQ(router.Answer(Request("GET", "/metrics", "Basic YWxpY2U6d3Jvbmc=")).status, 401);
  EXPECT_EQ(router.Answer(Request("GET", "/metrics", "Basic YWxpY2U6c2VjcmV0")).status, 200);
  EXPECT_EQ(counters_.missing->Value(), 3);
  EXPECT_EQ(counters_.malformed->Value(), 1);
  EXPECT_EQ(counters_.invalid->Value(), 1);
}

TEST_F(RouterTest, ReloadAsPrometheusAnswersIt) {
  EXPECT_EQ(Make().Answer(Request("POST", "/-/reload")).status, 403);
  std::optional<std::string> refusal;
  int reloads = 0;
  routes_.reload = [&] {
    ++reloads;
    return refusal;
  };
  const Router router = Make();
  EXPECT_EQ(router.Answer(Request("GET", "/-/reload")).status, 405);
  EXPECT_EQ(router.Answer(Request("POST", "/-/reload")).status, 200);
  refusal = "rails[0]: no such device";
  const HttpResponse refused = router.Answer(Request("PUT", "/-/reload"));
  EXPECT_EQ(refused.status, 500);
  EXPECT_THAT(refused.body, HasSubstr("failed to reload config: rails[0]: no such device"));
  EXPECT_EQ(reloads, 2);
}

TEST_F(RouterTest, ReadinessAndStopping) {
  bool ready = false;
  routes_.is_ready = [&] { return ready; };
  Router router = Make();
  EXPECT_EQ(router.Answer(Request("GET", "/-/ready")).status, 503);
  ready = true;
  EXPECT_EQ(router.Answer(Request("HEAD", "/-/ready")).status, 200);
  EXPECT_EQ(router.Answer(Request("POST", "/-/healthy")).status, 405);
  router.StartStopping();
  const HttpResponse stopping = router.Answer(Request("GET", "/metrics"));
  EXPECT_EQ(stopping.status, 503);
  EXPECT_EQ(stopping.body, "Stopping\n");
}

TEST_F(RouterTest, TheTelemetryPathAtTheRootHasNoLandingPage) {
  routes_.telemetry_path = "/";
  routes_.landing_page = nullptr;
  EXPECT_THAT(Make().Answer(Request("GET", "/")).body, HasSubstr("rail_test_value 42"));
}

}  // namespace
}  // namespace rail::web::detail
