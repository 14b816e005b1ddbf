// The command line and exposition body every benchmark server shares, so that each server's
// file holds only what its library needs.
#pragma once

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

struct BenchOptions {
  int port = 0;
  std::string body;  // the bytes GET /metrics answers with, read from --body
  std::string cert, key;
  int max_connections = 1000;  // the agent's --web.max-connections default
  int header_timeout_ms = 5000;
  bool tls() const { return !cert.empty(); }
};

inline std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(2);
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline BenchOptions ParseOptionsOrDie(int argc, char** argv) {
  BenchOptions options;
  std::string body_file;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--port") options.port = std::atoi(value.c_str());
    else if (flag == "--body") body_file = value;
    else if (flag == "--cert") options.cert = value;
    else if (flag == "--key") options.key = value;
    else if (flag == "--max-connections") options.max_connections = std::atoi(value.c_str());
    else if (flag == "--header-timeout-ms") options.header_timeout_ms = std::atoi(value.c_str());
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  if (argc % 2 == 0 || options.port <= 0 || body_file.empty() ||
      options.cert.empty() != options.key.empty() || options.max_connections < 1 ||
      options.header_timeout_ms < 1) {
    std::fprintf(stderr,
                 "usage: %s --port P --body FILE [--cert C --key K] [--max-connections N] "
                 "[--header-timeout-ms MS]\n",
                 argv[0]);
    std::exit(2);
  }
  options.body = ReadFileOrDie(body_file);
  // A client that disconnects mid-response must not kill the server (not every library sends
  // with MSG_NOSIGNAL).
  std::signal(SIGPIPE, SIG_IGN);
  return options;
}
