#include "rail/peer/framing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rail::peer {
namespace {

using nlohmann::json;

std::string Header(std::uint32_t length) {
  return {static_cast<char>(length >> 24), static_cast<char>((length >> 16) & 0xff),
          static_cast<char>((length >> 8) & 0xff), static_cast<char>(length & 0xff)};
}

std::string RawFrame(const std::string& payload) {
  return Header(static_cast<std::uint32_t>(payload.size())) + payload;
}

std::string Frame(const json& message) {
  std::string error;
  auto frame = EncodeFrame(message, kDefaultMaxFrameBytes, &error);
  EXPECT_TRUE(frame) << error;
  return frame.value_or("");
}

json Message(const std::string& type, int sequence) {
  return {{"v", kProtocolVersion}, {"type", type}, {"sequence", sequence}};
}

// Feeds `input` as-is and collects every non-need-more result.
std::vector<DecodeResult> DecodeAll(FrameDecoder& decoder, std::string_view input) {
  std::vector<DecodeResult> results;
  while (true) {
    DecodeResult result = decoder.Decode(&input);
    if (result.status == DecodeStatus::kNeedMore) {
      EXPECT_TRUE(input.empty());
      return results;
    }
    results.push_back(std::move(result));
    if (decoder.failed()) return results;
  }
}

TEST(EncodeFrame, WritesBigEndianLengthThenJson) {
  std::string error;
  auto frame = EncodeFrame(json{{"v", 1}, {"type", "x"}}, 1024, &error);
  ASSERT_TRUE(frame) << error;
  const std::string payload = R"({"type":"x","v":1})";
  EXPECT_EQ(*frame, Header(static_cast<std::uint32_t>(payload.size())) + payload);
}

TEST(EncodeFrame, RefusesPayloadOverTheLimit) {
  std::string error;
  json big = Message("hello", 1);
  big["padding"] = std::string(200, 'x');
  EXPECT_FALSE(EncodeFrame(big, 100, &error));
  EXPECT_NE(error.find("exceeds the limit of 100 bytes"), std::string::npos) << error;
}

TEST(EncodeFrame, RefusesInvalidUtf8WithoutThrowing) {
  std::string error;
  json bad = Message("hello", 1);
  bad["name"] = std::string("\xff\xfe", 2);
  EXPECT_FALSE(EncodeFrame(bad, 1024, &error));
  EXPECT_NE(error.find("cannot be serialised"), std::string::npos) << error;
}

TEST(FrameDecoder, DecodesOneFrame) {
  FrameDecoder decoder;
  auto results = DecodeAll(decoder, Frame(Message("hello", 7)));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, DecodeStatus::kFrame);
  EXPECT_EQ(results[0].message["type"], "hello");
  EXPECT_EQ(results[0].message["sequence"], 7);
  EXPECT_EQ(decoder.buffered_bytes(), 0u);
}

TEST(FrameDecoder, SeveralFramesInOneChunkComeOutOneByOne) {
  FrameDecoder decoder;
  const std::string chunk =
      Frame(Message("a", 1)) + Frame(Message("b", 2)) + Frame(Message("c", 3));
  std::string_view input = chunk;
  for (const char* type : {"a", "b", "c"}) {
    DecodeResult result = decoder.Decode(&input);
    ASSERT_EQ(result.status, DecodeStatus::kFrame) << result.error;
    EXPECT_EQ(result.message["type"], type);
  }
  EXPECT_TRUE(input.empty());
  EXPECT_EQ(decoder.Decode(&input).status, DecodeStatus::kNeedMore);
}

TEST(FrameDecoder, FrameSplitAtEveryPossibleByteBoundary) {
  const std::string stream = Frame(Message("hello", 1)) + Frame(Message("probe_setup", 2));
  for (std::size_t split = 0; split <= stream.size(); ++split) {
    FrameDecoder decoder;
    auto results = DecodeAll(decoder, std::string_view(stream).substr(0, split));
    auto rest = DecodeAll(decoder, std::string_view(stream).substr(split));
    results.insert(results.end(), rest.begin(), rest.end());
    ASSERT_EQ(results.size(), 2u) << "split at " << split;
    EXPECT_EQ(results[0].message["type"], "hello");
    EXPECT_EQ(results[1].message["type"], "probe_setup");
  }
}

TEST(FrameDecoder, ByteByByteDelivery) {
  const std::string stream = Frame(Message("hello", 1)) + Frame(Message("bye", 2));
  FrameDecoder decoder;
  std::vector<std::string> types;
  for (char byte : stream) {
    for (auto& result : DecodeAll(decoder, std::string_view(&byte, 1))) {
      ASSERT_EQ(result.status, DecodeStatus::kFrame) << result.error;
      types.push_back(result.message["type"]);
    }
  }
  EXPECT_EQ(types, (std::vector<std::string>{"hello", "bye"}));
}

TEST(FrameDecoder, TruncatedFrameWaitsForTheRest) {
  const std::string frame = Frame(Message("hello", 1));
  FrameDecoder decoder;
  std::string_view partial = std::string_view(frame).substr(0, frame.size() - 1);
  EXPECT_EQ(decoder.Decode(&partial).status, DecodeStatus::kNeedMore);
  EXPECT_EQ(decoder.buffered_bytes(), frame.size() - 1 - kFrameHeaderBytes);

  std::string_view header_only = std::string_view(frame).substr(0, 2);
  FrameDecoder other;
  EXPECT_EQ(other.Decode(&header_only).status, DecodeStatus::kNeedMore);
  EXPECT_EQ(other.buffered_bytes(), 2u);
}

TEST(FrameDecoder, OversizedLengthIsFatalAndNothingIsBuffered) {
  FrameDecoder decoder(1024);
  // The length alone condemns the frame: the decoder must not wait for, or buffer, its 4 GiB.
  std::string input = Header(0xffffffffU) + std::string(100, 'x');
  std::string_view view = input;
  DecodeResult result = decoder.Decode(&view);
  EXPECT_EQ(result.status, DecodeStatus::kOversized);
  EXPECT_EQ(result.error, "frame of 4294967295 bytes exceeds the limit of 1024 bytes");
  EXPECT_TRUE(decoder.failed());
  EXPECT_EQ(decoder.buffered_bytes(), 0u);

  // The stream has lost its framing: even a valid frame afterwards is refused.
  std::string valid = Frame(Message("hello", 1));
  std::string_view next = valid;
  EXPECT_EQ(decoder.Decode(&next).status, DecodeStatus::kOversized);
}

TEST(FrameDecoder, FrameOfExactlyTheLimitIsAccepted) {
  const std::string payload = R"({"v":1,"type":"x"})";
  FrameDecoder decoder(payload.size());
  auto results = DecodeAll(decoder, RawFrame(payload));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, DecodeStatus::kFrame);

  FrameDecoder smaller(payload.size() - 1);
  results = DecodeAll(smaller, RawFrame(payload));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, DecodeStatus::kOversized);
}

TEST(FrameDecoder, BufferNeverExceedsLimitPlusHeader) {
  const std::size_t limit = 256;
  FrameDecoder decoder(limit);
  std::string stream;
  for (int i = 0; i < 50; ++i) {
    json message = Message("fill", i);
    message["padding"] = std::string(static_cast<std::size_t>(i * 4), 'p');
    std::string error;
    auto frame = EncodeFrame(message, limit, &error);
    if (frame) stream += *frame;
  }
  std::size_t frames = 0;
  for (std::size_t offset = 0; offset < stream.size(); offset += 7) {
    std::string_view chunk = std::string_view(stream).substr(offset, 7);
    while (true) {
      DecodeResult result = decoder.Decode(&chunk);
      EXPECT_LE(decoder.buffered_bytes(), limit + kFrameHeaderBytes);
      if (result.status == DecodeStatus::kNeedMore) break;
      ASSERT_EQ(result.status, DecodeStatus::kFrame) << result.error;
      ++frames;
    }
  }
  EXPECT_GT(frames, 40u);
}

TEST(FrameDecoder, GarbageIsMalformedAndTheNextFrameStillDecodes) {
  FrameDecoder decoder;
  auto results = DecodeAll(decoder, RawFrame("GET / HTTP/1.1") + Frame(Message("hello", 1)));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].status, DecodeStatus::kMalformedJson);
  EXPECT_EQ(results[0].error.rfind("malformed JSON: ", 0), 0u) << results[0].error;
  EXPECT_EQ(results[1].status, DecodeStatus::kFrame);
}

TEST(FrameDecoder, RandomBinaryPayloadIsMalformed) {
  FrameDecoder decoder;
  std::string garbage;
  for (int i = 0; i < 64; ++i) garbage.push_back(static_cast<char>((i * 73 + 11) & 0xff));
  auto results = DecodeAll(decoder, RawFrame(garbage));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, DecodeStatus::kMalformedJson);
}

TEST(FrameDecoder, EmptyAndTruncatedJsonAreMalformed) {
  FrameDecoder decoder;
  auto results = DecodeAll(decoder, RawFrame("") + RawFrame(R"({"v":1,"type":"hel)"));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].status, DecodeStatus::kMalformedJson);
  EXPECT_EQ(results[0].error, "empty frame");
  EXPECT_EQ(results[1].status, DecodeStatus::kMalformedJson);
}

TEST(FrameDecoder, DeepNestingIsRefused) {
  FrameDecoder decoder;
  const std::string deep =
      R"({"v":1,"type":"x","a":)" + std::string(100, '[') + std::string(100, ']') + "}";
  const std::string shallow = R"({"v":1,"type":"x","a":[[[1]]]})";
  auto results = DecodeAll(decoder, RawFrame(deep) + RawFrame(shallow));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].status, DecodeStatus::kMalformedJson);
  EXPECT_NE(results[0].error.find("nesting deeper than"), std::string::npos);
  EXPECT_EQ(results[1].status, DecodeStatus::kFrame) << results[1].error;
}

TEST(FrameDecoder, EnvelopeMustBeAnObjectWithVersionAndType) {
  FrameDecoder decoder;
  auto results = DecodeAll(decoder, RawFrame("[1,2]") + RawFrame(R"({"type":"hello"})") +
                                        RawFrame(R"({"v":"1","type":"hello"})") +
                                        RawFrame(R"({"v":1})") + RawFrame(R"({"v":1,"type":5})"));
  ASSERT_EQ(results.size(), 5u);
  for (const auto& result : results) EXPECT_EQ(result.status, DecodeStatus::kBadEnvelope);
  EXPECT_EQ(results[0].error, "message must be a JSON object, got array");
  EXPECT_EQ(results[1].error, "message lacks an integer protocol version field \"v\"");
  EXPECT_EQ(results[2].error, "message lacks an integer protocol version field \"v\"");
  EXPECT_EQ(results[3].error, "message lacks a string field \"type\"");
}

TEST(FrameDecoder, WrongVersionIsReportedWithTheMessage) {
  FrameDecoder decoder;
  auto results =
      DecodeAll(decoder, RawFrame(R"({"v":2,"type":"hello"})") +
                             RawFrame(R"({"v":-1,"type":"hello"})") + Frame(Message("hello", 1)));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].status, DecodeStatus::kWrongVersion);
  EXPECT_EQ(results[0].error, "protocol version 2 not supported (this agent speaks version 1)");
  EXPECT_EQ(results[0].message["type"], "hello");
  EXPECT_EQ(results[1].status, DecodeStatus::kWrongVersion);
  EXPECT_EQ(results[2].status, DecodeStatus::kFrame);
}

TEST(FrameDecoder, StatusNamesAreStableTokens) {
  EXPECT_STREQ(DecodeStatusName(DecodeStatus::kOversized), "oversized");
  EXPECT_STREQ(DecodeStatusName(DecodeStatus::kWrongVersion), "wrong_version");
  EXPECT_STREQ(DecodeStatusName(DecodeStatus::kMalformedJson), "malformed_json");
}

}  // namespace
}  // namespace rail::peer
