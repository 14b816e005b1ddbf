// A blocking HTTP client for the web layer's tests (Beast's synchronous API), and raw sockets for
// the clients a server must survive (idle, trickling, oversized).
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <string>
#include <utility>
#include <vector>

namespace rail::web::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct Response {
  int status = 0;
  std::string body;
  http::response<http::string_body> whole;
};

// A connection to 127.0.0.1:`port` (throws when refused).
inline tcp::socket Connect(asio::io_context& io, int port) {
  tcp::socket socket(io);
  socket.connect(
      tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
  return socket;
}

// One request on `socket`, which stays open when the server keeps it alive.
inline Response Exchange(tcp::socket& socket, const std::string& path,
                         const std::string& method = "GET",
                         std::vector<std::pair<std::string, std::string>> headers = {},
                         bool keep_alive = false) {
  http::request<http::string_body> request(http::string_to_verb(method), path, 11);
  request.set(http::field::host, "127.0.0.1");
  for (const auto& [name, value] : headers) request.set(name, value);
  request.keep_alive(keep_alive);
  request.prepare_payload();
  http::write(socket, request);
  beast::flat_buffer buffer;
  Response response;
  if (method == "HEAD") {
    http::response_parser<http::string_body> parser;
    parser.skip(true);  // a HEAD answer announces a body it does not send
    http::read(socket, buffer, parser);
    response.whole = parser.release();
  } else {
    http::read(socket, buffer, response.whole);
  }
  response.status = static_cast<int>(response.whole.result_int());
  response.body = response.whole.body();
  return response;
}

// One request on a connection of its own.
inline Response Get(int port, const std::string& path, const std::string& method = "GET",
                    std::vector<std::pair<std::string, std::string>> headers = {}) {
  asio::io_context io;
  tcp::socket socket = Connect(io, port);
  return Exchange(socket, path, method, std::move(headers));
}

}  // namespace rail::web::testing
