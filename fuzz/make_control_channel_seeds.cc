// Writes the seed corpus of control_channel_fuzz: one file per valid control-channel message
// (every type of messages.h and session_messages.h, as the agents send them), each file the
// fuzzer's chunk-size byte followed by the frame, plus one file holding a whole session's frames.
//
//   make_control_channel_seeds <directory>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "rail/peer/framing.h"
#include "rail/peer/messages.h"
#include "rail/peer/session_messages.h"

namespace {

using nlohmann::json;
namespace peer = rail::peer;

std::vector<std::pair<std::string, json>> Messages() {
  const std::string nonce(peer::kNonceBytes, '\x5a');
  const std::string proof(peer::kProofBytes, '\xa5');
  const peer::AgentVersions versions{"0.1.0", "1.13.1"};

  json insecure_hello = peer::ToJson(peer::Hello{"0.1.0", "1.13.1", nonce});
  insecure_hello[peer::kHelloAuthField] = peer::kAuthNone;

  peer::ProbeSetup ucx;
  ucx.kind = "ucx_throughput";
  ucx.rail = "rail0";
  ucx.message_sizes_bytes = {1048576};
  ucx.duration_seconds = 2;
  ucx.max_bytes = std::uint64_t{1} << 30;
  ucx.ucx_worker_address = std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x00\xff", 11);
  peer::ProbeSetup tcp;
  tcp.kind = "tcp_throughput";
  tcp.rail = "lab0";
  tcp.message_sizes_bytes = {131072, 8};
  tcp.duration_seconds = 0.5;
  tcp.max_bytes = 1000000;
  tcp.tcp_port = 40000;
  tcp.streams = 4;

  peer::ProbeSetupReply reply{versions, json::object()};
  reply.setup = {{"tcp_port", 40001}, {"tcp_address", "10.200.0.2"}, {"streams", 4}};
  peer::ProbeSetupReply ucx_reply{versions, json::object()};
  ucx_reply.setup = {{"ucx_worker_address", "AQIDBA=="},
                     {"ucx_rkey", "BQYH"},
                     {"buffer_address", 140737488355328ULL},
                     {"buffer_bytes", 1048576},
                     {"devices", json::array({"ra0"})}};

  return {
      {"hello", peer::ToJson(peer::Hello{"0.1.0", "1.13.1", nonce})},
      {"hello_insecure", insecure_hello},
      {"challenge", peer::ToJson(peer::Challenge{"0.1.0", "1.13.1", nonce, proof})},
      {"response", peer::ToJson(peer::Response{proof})},
      {"error", peer::ToJson(peer::ErrorReply{"limit", "at most 16 concurrent sessions"})},
      {"probe_setup_ucx", peer::ToJson(ucx)},
      {"probe_setup_tcp", peer::ToJson(tcp)},
      {"welcome", peer::ToJson(peer::Welcome{versions, true})},
      {"probe_setup_reply_tcp", peer::ToJson(reply)},
      {"probe_setup_reply_ucx", peer::ToJson(ucx_reply)},
      {"probe_done",
       peer::ToJson(peer::ProbeDone{{{"bytes_sent", 123456789}, {"seconds", 2.001}}})},
      {"probe_report",
       peer::ToJson(peer::ProbeReport{
           {{"bytes_received", 123456789}, {"seconds", 2.0}, {"cpu_seconds", 0.25}}})},
  };
}

bool Write(const std::string& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(file);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_control_channel_seeds <directory>\n";
    return 2;
  }
  const std::string directory = argv[1];
  // The first byte is the chunk size the fuzz target feeds the decoder with (value + 1 bytes).
  constexpr char kChunkByte = 6;
  std::string session(1, kChunkByte);
  for (const auto& [name, message] : Messages()) {
    std::string error;
    const auto frame = peer::EncodeFrame(message, peer::kDefaultMaxFrameBytes, &error);
    if (!frame) {
      std::cerr << name << ": " << error << "\n";
      return 1;
    }
    session += *frame;
    if (!Write(directory + "/" + name, std::string(1, kChunkByte) + *frame)) {
      std::cerr << directory << "/" << name << ": cannot write\n";
      return 1;
    }
  }
  if (!Write(directory + "/session", session)) {
    std::cerr << directory << "/session: cannot write\n";
    return 1;
  }
  return 0;
}
