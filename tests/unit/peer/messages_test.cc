#include "rail/peer/messages.h"

#include <gtest/gtest.h>

#include "rail/peer/encoding.h"
#include "rail/peer/session_messages.h"

namespace rail::peer {
namespace {

using nlohmann::json;

const std::string kNonce(kNonceBytes, '\x5a');
const std::string kProof(kProofBytes, '\x0f');

ProbeSetup SampleSetup() {
  ProbeSetup setup;
  setup.kind = "ucx_throughput";
  setup.rail = "rail0";
  setup.message_sizes_bytes = {8, 4096, 1 << 20};
  setup.duration_seconds = 2.5;
  setup.max_bytes = 5'000'000'000;
  setup.ucx_worker_address = std::string("\x00\x01\xfe\xff worker", 11);
  setup.ucx_rkey = "rkey\x00\x7f";
  setup.tcp_port = 5201;
  return setup;
}

TEST(Encoding, HexRoundTripAndRejects) {
  const std::string bytes("\x00\x10\xab\xff", 4);
  EXPECT_EQ(HexEncode(bytes), "0010abff");
  EXPECT_EQ(HexDecode("0010ABff"), bytes);
  EXPECT_FALSE(HexDecode("abc"));
  EXPECT_FALSE(HexDecode("zz"));
}

TEST(Encoding, Base64RoundTripAndStrictDecoding) {
  for (std::string bytes : {std::string(), std::string("f"), std::string("fo"), std::string("foo"),
                            std::string("\x00\xff\x10\x80", 4)}) {
    EXPECT_EQ(Base64Decode(Base64Encode(bytes)), bytes) << Base64Encode(bytes);
  }
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_FALSE(Base64Decode("Zm9vYg="));    // length
  EXPECT_FALSE(Base64Decode("Zm9v Yg=="));  // space
  EXPECT_FALSE(Base64Decode("Zm=vYg=="));   // padding inside
  EXPECT_FALSE(Base64Decode("Zm9vY==="));   // three padding characters
  EXPECT_FALSE(Base64Decode("Zm9v!g=="));   // alphabet
}

TEST(Messages, HelloRoundTrip) {
  const Hello hello{"0.1.0", "1.13.1", kNonce};
  const json wire = ToJson(hello);
  EXPECT_EQ(wire["v"], 1);
  EXPECT_EQ(wire["type"], "hello");
  std::string expected_hex;
  for (std::size_t i = 0; i < kNonceBytes; ++i) expected_hex += "5a";
  EXPECT_EQ(wire["nonce"], expected_hex);
  Hello decoded;
  std::string error;
  ASSERT_TRUE(FromJson(wire, &decoded, &error)) << error;
  EXPECT_EQ(decoded.agent_version, "0.1.0");
  EXPECT_EQ(decoded.ucx_version, "1.13.1");
  EXPECT_EQ(decoded.nonce, kNonce);
}

TEST(Messages, ChallengeAndResponseRoundTrip) {
  Challenge decoded_challenge;
  Response decoded_response;
  std::string error;
  ASSERT_TRUE(
      FromJson(ToJson(Challenge{"0.1.0", "1.13.1", kNonce, kProof}), &decoded_challenge, &error))
      << error;
  EXPECT_EQ(decoded_challenge.proof, kProof);
  ASSERT_TRUE(FromJson(ToJson(Response{kProof}), &decoded_response, &error)) << error;
  EXPECT_EQ(decoded_response.proof, kProof);
}

TEST(Messages, ProbeSetupRoundTripKeepsBinaryFields) {
  const ProbeSetup setup = SampleSetup();
  const json wire = ToJson(setup);
  EXPECT_EQ(wire["ucx_worker_address"], Base64Encode(setup.ucx_worker_address));
  ProbeSetup decoded;
  std::string error;
  ASSERT_TRUE(FromJson(wire, &decoded, &error)) << error;
  EXPECT_EQ(decoded.kind, setup.kind);
  EXPECT_EQ(decoded.rail, setup.rail);
  EXPECT_EQ(decoded.message_sizes_bytes, setup.message_sizes_bytes);
  EXPECT_DOUBLE_EQ(decoded.duration_seconds, 2.5);
  EXPECT_EQ(decoded.max_bytes, setup.max_bytes);
  EXPECT_EQ(decoded.ucx_worker_address, setup.ucx_worker_address);
  EXPECT_EQ(decoded.ucx_rkey, setup.ucx_rkey);
  EXPECT_EQ(decoded.tcp_port, std::optional<std::uint16_t>(5201));
}

TEST(Messages, ProbeSetupOptionalFieldsMayBeAbsent) {
  ProbeSetup setup = SampleSetup();
  setup.ucx_worker_address.clear();
  setup.ucx_rkey.clear();
  setup.tcp_port.reset();
  const json wire = ToJson(setup);
  EXPECT_FALSE(wire.contains("ucx_worker_address"));
  EXPECT_FALSE(wire.contains("tcp_port"));
  ProbeSetup decoded = SampleSetup();  // stale values must be cleared
  std::string error;
  ASSERT_TRUE(FromJson(wire, &decoded, &error)) << error;
  EXPECT_TRUE(decoded.ucx_worker_address.empty());
  EXPECT_TRUE(decoded.ucx_rkey.empty());
  EXPECT_FALSE(decoded.tcp_port);
}

struct BadField {
  const char* field;
  json value;  // null: remove the field
  const char* expected_error;
};

TEST(Messages, ProbeSetupErrorsNameTheField) {
  const std::vector<BadField> cases = {
      {"kind", nullptr, "probe_setup: missing field \"kind\""},
      {"rail", 7, "probe_setup: field \"rail\": expected a non-empty string, got number 7"},
      {"rail", "", "probe_setup: field \"rail\": expected a non-empty string, got string \"\""},
      {"message_sizes_bytes", json::array(),
       "probe_setup: field \"message_sizes_bytes\": expected a non-empty array of integers, got "
       "array []"},
      {"message_sizes_bytes",
       {8, -1},
       "probe_setup: field \"message_sizes_bytes\": element 1: expected an integer >= 1, got "
       "number -1"},
      {"message_sizes_bytes",
       {8, 0},
       "probe_setup: field \"message_sizes_bytes\": element 1: expected an integer >= 1, got "
       "number 0"},
      {"duration_seconds", "2",
       "probe_setup: field \"duration_seconds\": expected a positive number, got string \"2\""},
      {"duration_seconds", 0,
       "probe_setup: field \"duration_seconds\": expected a positive number, got number 0"},
      {"max_bytes", 1.5,
       "probe_setup: field \"max_bytes\": expected an integer >= 1, got number 1.5"},
      {"max_bytes", nullptr, "probe_setup: missing field \"max_bytes\""},
      {"ucx_worker_address", "not base64!",
       "probe_setup: field \"ucx_worker_address\": not valid base64"},
      {"ucx_rkey", 12, "probe_setup: field \"ucx_rkey\": expected a base64 string, got number 12"},
      {"tcp_port", 70000,
       "probe_setup: field \"tcp_port\": expected an integer >= 1 and <= 65535, got number 70000"},
      {"tcp_port", "5201",
       "probe_setup: field \"tcp_port\": expected an integer >= 1 and <= 65535, got string "
       "\"5201\""},
  };
  for (const BadField& bad : cases) {
    json wire = ToJson(SampleSetup());
    if (bad.value.is_null()) {
      wire.erase(bad.field);
    } else {
      wire[bad.field] = bad.value;
    }
    ProbeSetup decoded;
    std::string error;
    EXPECT_FALSE(FromJson(wire, &decoded, &error)) << bad.field;
    EXPECT_EQ(error, bad.expected_error);
  }
}

TEST(Messages, HandshakeErrorsNameTheField) {
  std::string error;
  Hello hello;
  json wire = ToJson(Hello{"0.1.0", "1.13.1", kNonce});
  wire["nonce"] = "abcd";
  EXPECT_FALSE(FromJson(wire, &hello, &error));
  EXPECT_EQ(error, "hello: field \"nonce\": expected 64 hex digits");

  wire.erase("nonce");
  EXPECT_FALSE(FromJson(wire, &hello, &error));
  EXPECT_EQ(error, "hello: missing field \"nonce\"");

  wire = ToJson(Hello{"0.1.0", "1.13.1", kNonce});
  wire["ucx_version"] = json::array({1, 13});
  EXPECT_FALSE(FromJson(wire, &hello, &error));
  EXPECT_EQ(error, "hello: field \"ucx_version\": expected a non-empty string, got array [1,13]");

  Response response;
  json response_wire = ToJson(Response{kProof});
  response_wire["proof"] = std::string(64, 'g');
  EXPECT_FALSE(FromJson(response_wire, &response, &error));
  EXPECT_EQ(error, "response: field \"proof\": expected 64 hex digits");
}

TEST(Messages, WrongTypeIsRefused) {
  Hello hello;
  std::string error;
  EXPECT_FALSE(FromJson(ToJson(Response{kProof}), &hello, &error));
  EXPECT_EQ(error, "hello: expected message type \"hello\", got \"response\"");
  EXPECT_FALSE(FromJson(json::array(), &hello, &error));
  EXPECT_EQ(error, "hello: expected a JSON object, got array");
}

TEST(Messages, ErrorReplyRoundTrip) {
  ErrorReply decoded;
  std::string error;
  ASSERT_TRUE(
      FromJson(ToJson(ErrorReply{"limit", "too many bytes", std::nullopt}), &decoded, &error))
      << error;
  EXPECT_EQ(decoded.reason, "limit");
  EXPECT_EQ(decoded.message, "too many bytes");
  EXPECT_FALSE(decoded.retry_after_ms);  // absent unless busy
  EXPECT_FALSE(ToJson(decoded).contains("retry_after_ms"));
}

TEST(Messages, BusyErrorCarriesItsRetryHint) {
  const json wire = ToJson(ErrorReply{"busy", "another bulk transfer", 1500});
  EXPECT_EQ(wire["retry_after_ms"], 1500);
  ErrorReply decoded;
  std::string error;
  ASSERT_TRUE(FromJson(wire, &decoded, &error)) << error;
  EXPECT_EQ(decoded.retry_after_ms, std::optional<std::uint64_t>(1500));
  json bad = wire;
  bad["retry_after_ms"] = -1;
  EXPECT_FALSE(FromJson(bad, &decoded, &error));
  EXPECT_NE(error.find("retry_after_ms"), std::string::npos) << error;
}

TEST(Messages, ProbeSetupRunIdIsOptionalAndBounded) {
  ProbeSetup setup = SampleSetup();
  EXPECT_FALSE(ToJson(setup).contains("run_id"));  // as peers that predate it send it
  setup.run_id = "0123456789abcdef";
  ProbeSetup decoded;
  std::string error;
  ASSERT_TRUE(FromJson(ToJson(setup), &decoded, &error)) << error;
  EXPECT_EQ(decoded.run_id, "0123456789abcdef");
  json wire = ToJson(setup);
  wire["run_id"] = std::string(kMaxRunIdBytes + 1, 'x');
  EXPECT_FALSE(FromJson(wire, &decoded, &error));
  EXPECT_NE(error.find("run_id"), std::string::npos) << error;
}

// Host memory is the field's absence, so that a responder that predates it reads a host run
// exactly as before; any other type travels by name.
TEST(Messages, ProbeSetupMemoryIsAbsentForHostAndBounded) {
  ProbeSetup setup = SampleSetup();
  EXPECT_FALSE(ToJson(setup).contains("memory"));
  setup.memory = "cuda";
  ProbeSetup decoded;
  std::string error;
  ASSERT_TRUE(FromJson(ToJson(setup), &decoded, &error)) << error;
  EXPECT_EQ(decoded.memory, "cuda");
  json wire = ToJson(setup);
  wire["memory"] = std::string(100, 'x');
  EXPECT_FALSE(FromJson(wire, &decoded, &error));
  EXPECT_NE(error.find("memory"), std::string::npos) << error;
  wire["memory"] = 3;
  EXPECT_FALSE(FromJson(wire, &decoded, &error));
}

TEST(Messages, LongOffendingValuesAreShortenedInErrors) {
  json wire = ToJson(SampleSetup());
  wire["rail"] = std::vector<int>(100, 1);
  ProbeSetup decoded;
  std::string error;
  EXPECT_FALSE(FromJson(wire, &decoded, &error));
  EXPECT_LT(error.size(), 150u) << error;
  EXPECT_NE(error.find("..."), std::string::npos);
}

TEST(WelcomeMessage, RailMtusRoundTripAndAreOptional) {
  Welcome welcome{{"1.0", "1.13.1"}, true, {{"rail0", 9000}, {"rail1", 1500}}, {}};
  const json wire = ToJson(welcome);
  EXPECT_EQ(wire["rail_mtus"]["rail1"], 1500);
  Welcome decoded;
  std::string error;
  ASSERT_TRUE(FromJson(wire, &decoded, &error)) << error;
  EXPECT_EQ(decoded.rail_mtus, welcome.rail_mtus);

  // A welcome of an agent that predates the field: unknown MTUs, not an error.
  Welcome old{{"0.9", "1.13.1"}, true, {}, {}};
  const json old_wire = ToJson(old);
  EXPECT_FALSE(old_wire.contains("rail_mtus"));
  decoded.rail_mtus = {{"stale", 1}};
  ASSERT_TRUE(FromJson(old_wire, &decoded, &error)) << error;
  EXPECT_TRUE(decoded.rail_mtus.empty());
}

TEST(WelcomeMessage, CarriesTheRespondersNameWhenItHasOne) {
  Welcome welcome{{"1.0", "1.13.1"}, true, {}, "node7"};
  Welcome decoded;
  std::string error;
  ASSERT_TRUE(FromJson(ToJson(welcome), &decoded, &error)) << error;
  EXPECT_EQ(decoded.name, "node7");
  // An agent that predates the name sends none: unknown, not an error.
  const json unnamed = ToJson(Welcome{{"1.0", "1.13.1"}, true, {}, {}});
  EXPECT_FALSE(unnamed.contains("name"));
  ASSERT_TRUE(FromJson(unnamed, &decoded, &error)) << error;
  EXPECT_TRUE(decoded.name.empty());
  json wire = ToJson(welcome);
  wire["name"] = std::string(kMaxAgentNameBytes + 1, 'x');
  EXPECT_FALSE(FromJson(wire, &decoded, &error));
  EXPECT_NE(error.find("welcome: field \"name\""), std::string::npos) << error;
}

TEST(WelcomeMessage, MalformedRailMtusAreRejectedNamingTheField) {
  json wire = ToJson(Welcome{{"1.0", "1.13.1"}, true, {}, {}});
  Welcome decoded;
  std::string error;
  wire["rail_mtus"] = json::array({9000});
  EXPECT_FALSE(FromJson(wire, &decoded, &error));
  EXPECT_NE(error.find("welcome: field \"rail_mtus\""), std::string::npos) << error;
  wire["rail_mtus"] = json{{"rail0", "9000"}};
  EXPECT_FALSE(FromJson(wire, &decoded, &error));
  EXPECT_NE(error.find("MTU of rail \"rail0\""), std::string::npos) << error;
  wire["rail_mtus"] = json{{"rail0", -1}};
  EXPECT_FALSE(FromJson(wire, &decoded, &error));
}

}  // namespace
}  // namespace rail::peer
