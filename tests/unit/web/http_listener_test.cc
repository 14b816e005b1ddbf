#include "web/http_listener.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "unit/web/http_client.h"

namespace rail::web::detail {
namespace {

using ::testing::HasSubstr;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using web::testing::Connect;
using web::testing::Exchange;
using web::testing::Get;
using namespace std::chrono_literals;

int ThreadsOfThisProcess() {
  int threads = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    ++threads;
  }
  return threads;
}

// Threads of this process named `name` (/proc/self/task/<tid>/comm).
int ThreadsNamed(const std::string& name) {
  int threads = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) ++threads;
  }
  return threads;
}

class HttpListenerTest : public ::testing::Test {
 protected:
  HttpListenerTest() {
    auto& open = prometheus::BuildGauge().Name("open").Register(registry_);
    auto& dropped = prometheus::BuildCounter().Name("dropped").Register(registry_);
    metrics_ = {&open.Add({}),
                {&dropped.Add({{"r", "timeout"}}), &dropped.Add({{"r", "tls"}}),
                 &dropped.Add({{"r", "bad"}}), &dropped.Add({{"r", "large"}})}};
  }

  std::unique_ptr<HttpListener> Start(int max_connections = 100,
                                      std::chrono::milliseconds timeout = 2000ms) {
    ListenerOptions options;
    options.endpoints = {{"127.0.0.1", 0}};
    options.max_connections = max_connections;
    options.request_timeout = timeout;
    auto listener = std::make_unique<HttpListener>(
        options, [this](const HttpRequest& request) { return Answer(request); }, metrics_);
    port_ = listener->Ports().at(0);
    return listener;
  }

  HttpResponse Answer(const HttpRequest& request) {
    ++requests_;
    if (request.target == "/throw") throw std::runtime_error("handler failed");
    if (request.target == "/slow") std::this_thread::sleep_for(300ms);
    HttpResponse response;
    response.body = "answer to " + request.method + " " + request.target + "\n";
    return response;
  }

  prometheus::Registry registry_;
  ListenerMetrics metrics_;
  std::atomic<int> requests_{0};
  int port_ = 0;
};

TEST_F(HttpListenerTest, ConnectionsCostNoThreads) {
  auto listener = Start();
  EXPECT_EQ(ThreadsNamed("web-loop"), kEventLoopThreads);
  EXPECT_EQ(ThreadsNamed("web-handler"), kHandlerThreads);
  const int serving = ThreadsOfThisProcess();
  asio::io_context io;
  std::vector<tcp::socket> idle;
  for (int i = 0; i < 80; ++i) idle.push_back(Connect(io, port_));
  const auto answer = Get(port_, "/metrics");
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "answer to GET /metrics\n");
  EXPECT_GE(metrics_.open_connections->Value(), 80);  // and the scrape's, if not closed yet
  EXPECT_EQ(ThreadsOfThisProcess(), serving);
}

TEST_F(HttpListenerTest, ATricklingClientIsCutAtTheDeadline) {
  auto listener = Start(100, 400ms);
  asio::io_context io;
  tcp::socket slow = Connect(io, port_);
  // One header byte every 50 ms, never ending the headers: an inactivity timeout (400 ms) would
  // never fire; the request's deadline does, long before the 3 s this client would go on.
  boost::system::error_code error;
  for (int i = 0; i < 60 && !error; ++i) {
    asio::write(slow, asio::buffer("X", 1), error);
    std::this_thread::sleep_for(50ms);
  }
  char buffer[64];
  if (!error) slow.read_some(asio::buffer(buffer), error);
  EXPECT_TRUE(error) << "the server still held the trickling connection after 3 s";
  EXPECT_EQ(metrics_.dropped.timeout->Value(), 1);
  EXPECT_EQ(requests_.load(), 0);
}

TEST_F(HttpListenerTest, TheCeilingHoldsNewConnectionsUntilOneCloses) {
  auto listener = Start(2, 500ms);
  asio::io_context io;
  tcp::socket first = Connect(io, port_);
  tcp::socket second = Connect(io, port_);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(metrics_.open_connections->Value(), 2);
  // Accepted by the kernel, served once an idle one is cut at its deadline.
  const auto answer = Get(port_, "/third");
  EXPECT_EQ(answer.status, 200);
  EXPECT_LE(metrics_.open_connections->Value(), 2);
  EXPECT_GE(metrics_.dropped.timeout->Value(), 1);
}

TEST_F(HttpListenerTest, OversizedAndMalformedRequestsAreRefusedAndCounted) {
  auto listener = Start();
  const auto large = Get(port_, "/metrics", "GET", {{"X-Padding", std::string(20000, 'a')}});
  EXPECT_EQ(large.status, 431);
  EXPECT_EQ(metrics_.dropped.too_large->Value(), 1);

  asio::io_context io;
  tcp::socket socket = Connect(io, port_);
  asio::write(socket, asio::buffer(std::string("NONSENSE\r\n\r\n")));
  beast::flat_buffer buffer;
  http::response<http::string_body> refused;
  http::read(socket, buffer, refused);
  EXPECT_EQ(refused.result_int(), 400u);
  EXPECT_EQ(metrics_.dropped.bad_request->Value(), 1);
  EXPECT_EQ(requests_.load(), 0);
  EXPECT_EQ(Get(port_, "/after").status, 200);  // and it goes on serving
}

TEST_F(HttpListenerTest, KeepsConnectionsAliveAndAnswersHead) {
  auto listener = Start();
  asio::io_context io;
  tcp::socket socket = Connect(io, port_);
  EXPECT_EQ(Exchange(socket, "/one", "GET", {}, true).body, "answer to GET /one\n");
  EXPECT_EQ(Exchange(socket, "/two", "GET", {}, true).body, "answer to GET /two\n");
  const auto head = Exchange(socket, "/three", "HEAD", {}, true);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(head.whole[http::field::content_length], "22");  // "answer to HEAD /three\n"
  EXPECT_EQ(requests_.load(), 3);
}

TEST_F(HttpListenerTest, AFailingHandlerAnswers500AndServingGoesOn) {
  auto listener = Start();
  EXPECT_EQ(Get(port_, "/throw").status, 500);
  EXPECT_EQ(Get(port_, "/fine").status, 200);
}

TEST_F(HttpListenerTest, StoppingLetsTheRequestInFlightFinish) {
  auto listener = Start();
  auto slow = std::async(std::launch::async, [this] { return Get(port_, "/slow"); });
  while (requests_.load() == 0) std::this_thread::sleep_for(5ms);
  listener.reset();  // while the handler sleeps
  const auto answer = slow.get();
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "answer to GET /slow\n");
}

TEST_F(HttpListenerTest, ATakenPortNamesTheAddress) {
  auto listener = Start();
  ListenerOptions options;
  options.endpoints = {{"127.0.0.1", static_cast<std::uint16_t>(port_)}};
  try {
    HttpListener second(
        options, [](const HttpRequest&) { return HttpResponse{}; }, metrics_);
    FAIL() << "binding a taken port must fail";
  } catch (const std::exception& error) {
    EXPECT_THAT(error.what(), HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(port_)));
  }
}

}  // namespace
}  // namespace rail::web::detail
