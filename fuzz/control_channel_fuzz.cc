// The control channel as a peer's bytes reach it: the frame decoder, in whatever chunks recv()
// returns, then every message parser of messages.h and session_messages.h and the report fields
// an initiator reads. Input: one byte choosing the chunk size, then the byte stream.
//
// Invariants: chunking does not change what the decoder yields; kNeedMore only once the input is
// used up; the decoder never holds more than one frame; a decoded message re-encodes into a frame
// that decodes to the same message; a message a parser accepts satisfies the parser's documented
// guarantees and survives ToJson -> EncodeFrame -> decode -> FromJson unchanged. Nothing throws:
// the decoder and the parsers promise not to, so any exception is a crash.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "probe/probe_run.h"
#include "rail/peer/framing.h"
#include "rail/peer/messages.h"
#include "rail/peer/session_messages.h"

namespace {

using nlohmann::json;
using rail::peer::DecodeResult;
using rail::peer::DecodeStatus;
using rail::peer::FrameDecoder;

// Small enough that the fuzzer reaches kOversized, large enough for every real message.
constexpr std::size_t kMaxFrameBytes = 4096;
constexpr std::size_t kUnlimited = std::numeric_limits<std::uint32_t>::max();

std::vector<DecodeResult> DecodeInChunks(std::string_view stream, std::size_t chunk_bytes) {
  FrameDecoder decoder(kMaxFrameBytes);
  std::vector<DecodeResult> results;
  while (!stream.empty()) {
    std::string_view input = stream.substr(0, chunk_bytes);
    stream.remove_prefix(input.size());
    while (true) {
      const std::size_t before = input.size();
      DecodeResult result = decoder.Decode(&input);
      FUZZ_CHECK(decoder.buffered_bytes() <= kMaxFrameBytes + rail::peer::kFrameHeaderBytes,
                 "the decoder holds at most one frame");
      if (result.status == DecodeStatus::kNeedMore) {
        FUZZ_CHECK(input.empty(), "kNeedMore only once every input byte is consumed");
        break;
      }
      FUZZ_CHECK(result.status == DecodeStatus::kFrame || !result.error.empty(),
                 "every error status carries an error text");
      const bool fatal = result.status == DecodeStatus::kOversized;
      results.push_back(std::move(result));
      if (fatal) {
        FUZZ_CHECK(decoder.failed(), "kOversized leaves the decoder failed");
        std::string_view more = input;
        FUZZ_CHECK(
            decoder.Decode(&more).status == DecodeStatus::kOversized && more.size() == input.size(),
            "a failed decoder repeats kOversized and consumes nothing");
        return results;
      }
      FUZZ_CHECK(input.size() < before, "a result completes a frame, so it consumes bytes");
    }
  }
  return results;
}

json DecodeOne(const std::string& frame) {
  FrameDecoder decoder(kUnlimited);
  std::string_view input = frame;
  DecodeResult result = decoder.Decode(&input);
  FUZZ_CHECK(result.status == DecodeStatus::kFrame, "an encoded message decodes as a frame");
  FUZZ_CHECK(input.empty(), "an encoded frame is consumed whole");
  return std::move(result.message);
}

// Encoding a message and decoding the frame gives the message back.
json WireRoundTrip(const json& message) {
  std::string error;
  const std::optional<std::string> frame = rail::peer::EncodeFrame(message, kUnlimited, &error);
  FUZZ_CHECK(frame.has_value(), "a message that was decoded from JSON can be encoded");
  json decoded = DecodeOne(*frame);
  FUZZ_CHECK(decoded == message, "encode(decode(x)) round-trips");
  return decoded;
}

// A message `Type` that FromJson accepted survives the wire unchanged.
template <typename Type, typename Equal>
void CheckParsed(const Type& parsed, Equal equal) {
  const json back = WireRoundTrip(rail::peer::ToJson(parsed));
  Type again;
  std::string error;
  FUZZ_CHECK(rail::peer::FromJson(back, &again, &error), "ToJson output parses");
  FUZZ_CHECK(equal(parsed, again), "FromJson(ToJson(m)) == m");
}

void CheckHexFields(const rail::peer::Hello& hello) {
  FUZZ_CHECK(hello.nonce.size() == rail::peer::kNonceBytes, "hello nonce has kNonceBytes");
  FUZZ_CHECK(!hello.agent_version.empty() && !hello.ucx_version.empty(), "versions non-empty");
}

void CheckProbeSetup(const rail::peer::ProbeSetup& setup) {
  FUZZ_CHECK(!setup.kind.empty() && !setup.rail.empty(), "kind and rail non-empty");
  FUZZ_CHECK(!setup.message_sizes_bytes.empty(), "at least one message size");
  for (std::uint64_t size : setup.message_sizes_bytes) FUZZ_CHECK(size > 0, "sizes positive");
  FUZZ_CHECK(std::isfinite(setup.duration_seconds) && setup.duration_seconds > 0,
             "duration positive and finite");
  FUZZ_CHECK(setup.max_bytes >= 1, "max_bytes positive");
  FUZZ_CHECK(setup.streams >= 1 && setup.streams <= rail::peer::kMaxProbeStreams,
             "streams within 1..kMaxProbeStreams");
  FUZZ_CHECK(!setup.tcp_port || *setup.tcp_port != 0, "tcp_port 1..65535");
}

bool SameVersions(const rail::peer::AgentVersions& a, const rail::peer::AgentVersions& b) {
  return a.agent_version == b.agent_version && a.ucx_version == b.ucx_version;
}

// The fields initiators read from a peer's probe_setup_reply and probe_report.
void CheckReportFields(const json& fields) {
  for (const char* field : {"cpu_seconds", "seconds"}) {
    const std::optional<double> number = rail::probe::detail::ReportNumber(fields, field);
    FUZZ_CHECK(!number || (std::isfinite(*number) && *number >= 0), "report numbers finite, >= 0");
  }
  for (const char* field : {"bytes_received", "tcp_port", "buffer_address", "buffer_bytes"}) {
    (void)rail::probe::detail::ReportCount(fields, field);
  }
}

void ParseAsEveryType(const json& message) {
  namespace peer = rail::peer;
  std::string error;
  (void)peer::MessageType(message);
  (void)peer::IsInsecureHello(message);

  if (peer::Hello m; peer::FromJson(message, &m, &error)) {
    CheckHexFields(m);
    CheckParsed(m, [](const peer::Hello& a, const peer::Hello& b) {
      return a.agent_version == b.agent_version && a.ucx_version == b.ucx_version &&
             a.nonce == b.nonce;
    });
  }
  if (peer::Challenge m; peer::FromJson(message, &m, &error)) {
    FUZZ_CHECK(m.nonce.size() == peer::kNonceBytes && m.proof.size() == peer::kProofBytes,
               "challenge nonce and proof sizes");
    CheckParsed(m, [](const peer::Challenge& a, const peer::Challenge& b) {
      return a.agent_version == b.agent_version && a.ucx_version == b.ucx_version &&
             a.nonce == b.nonce && a.proof == b.proof;
    });
  }
  if (peer::Response m; peer::FromJson(message, &m, &error)) {
    FUZZ_CHECK(m.proof.size() == peer::kProofBytes, "response proof size");
    CheckParsed(
        m, [](const peer::Response& a, const peer::Response& b) { return a.proof == b.proof; });
  }
  if (peer::ErrorReply m; peer::FromJson(message, &m, &error)) {
    const std::string reason = peer::KnownReason(m.reason);
    FUZZ_CHECK(reason == m.reason || reason == "peer_error", "unknown reasons become peer_error");
    CheckParsed(m, [](const peer::ErrorReply& a, const peer::ErrorReply& b) {
      return a.reason == b.reason && a.message == b.message;
    });
  }
  if (peer::ProbeSetup m; peer::FromJson(message, &m, &error)) {
    CheckProbeSetup(m);
    CheckParsed(m, [](const peer::ProbeSetup& a, const peer::ProbeSetup& b) {
      return a.kind == b.kind && a.rail == b.rail &&
             a.message_sizes_bytes == b.message_sizes_bytes &&
             a.duration_seconds == b.duration_seconds && a.max_bytes == b.max_bytes &&
             a.ucx_worker_address == b.ucx_worker_address && a.ucx_rkey == b.ucx_rkey &&
             a.tcp_port == b.tcp_port && a.streams == b.streams;
    });
  } else {
    FUZZ_CHECK(!error.empty(), "a rejected message says why");
  }
  if (peer::Welcome m; peer::FromJson(message, &m, &error)) {
    CheckParsed(m, [](const peer::Welcome& a, const peer::Welcome& b) {
      return SameVersions(a.versions, b.versions) && a.authenticated == b.authenticated;
    });
  }
  if (peer::ProbeSetupReply m; peer::FromJson(message, &m, &error)) {
    CheckReportFields(m.setup);
    CheckParsed(m, [](const peer::ProbeSetupReply& a, const peer::ProbeSetupReply& b) {
      return SameVersions(a.versions, b.versions) && a.setup == b.setup;
    });
  }
  if (peer::ProbeDone m; peer::FromJson(message, &m, &error)) {
    CheckParsed(m, [](const peer::ProbeDone& a, const peer::ProbeDone& b) {
      return a.measured == b.measured;
    });
  }
  if (peer::ProbeReport m; peer::FromJson(message, &m, &error)) {
    CheckReportFields(m.report);
    CheckParsed(m, [](const peer::ProbeReport& a, const peer::ProbeReport& b) {
      return a.report == b.report;
    });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk_bytes = std::size_t{data[0]} + 1;
  const std::string_view stream = rail::fuzz::AsText(data + 1, size - 1);

  const std::vector<DecodeResult> whole = DecodeInChunks(stream, stream.size() + 1);
  const std::vector<DecodeResult> chunked = DecodeInChunks(stream, chunk_bytes);
  FUZZ_CHECK(whole.size() == chunked.size(), "chunking does not change the number of results");
  for (std::size_t i = 0; i < whole.size(); ++i) {
    FUZZ_CHECK(whole[i].status == chunked[i].status && whole[i].message == chunked[i].message &&
                   whole[i].error == chunked[i].error,
               "chunking does not change the results");
  }

  for (const DecodeResult& result : whole) {
    if (result.status != DecodeStatus::kFrame) continue;
    WireRoundTrip(result.message);
    ParseAsEveryType(result.message);
  }
  return 0;
}
