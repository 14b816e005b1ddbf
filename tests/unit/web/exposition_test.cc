#include "web/exposition.h"

#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <zlib.h>

#include <sstream>

namespace rail::web::detail {
namespace {

std::string Gunzip(const std::string& compressed) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return out;
}

TEST(Exposition, SerializesEveryLiveCollectableInOrder) {
  auto first = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter().Name("first_total").Help("h").Register(*first).Add({}).Increment(3);
  auto second = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter().Name("second_total").Help("h").Register(*second).Add({{"a", "b"}});
  std::weak_ptr<prometheus::Collectable> gone;
  {
    auto temporary = std::make_shared<prometheus::Registry>();
    gone = temporary;
  }
  const std::string text = Exposition().Render({first, gone, second});
  const auto first_at = text.find("first_total 3");
  const auto second_at = text.find("second_total{a=\"b\"} 0");
  ASSERT_NE(first_at, std::string::npos) << text;
  ASSERT_NE(second_at, std::string::npos) << text;
  EXPECT_LT(first_at, second_at);
}

// prometheus-cpp's text of the registry's families written all at once, as before the cache.
std::string SerializedAtOnce(prometheus::Registry& registry) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry.Collect());
  return out.str();
}

TEST(Exposition, KeptTextIsTheSerializersAndOnlyUnchangedFamiliesAreKept) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto& state = prometheus::BuildGauge().Name("state").Help("h").Register(*registry);
  auto& bytes = prometheus::BuildCounter().Name("bytes_total").Help("h").Register(*registry);
  auto& info = prometheus::BuildGauge().Name("info").Help("h").Register(*registry);
  state.Add({{"rail", "rail0"}}).Set(1);
  auto& rail0_bytes = bytes.Add({{"rail", "rail0"}});
  info.Add({{"gid", "fe80::1"}}).Set(1);
  Exposition exposition;

  EXPECT_EQ(exposition.Render({registry}), SerializedAtOnce(*registry));
  EXPECT_EQ(exposition.families_written(), 3u);
  EXPECT_EQ(exposition.Render({registry}), SerializedAtOnce(*registry));
  EXPECT_EQ(exposition.families_written(), 3u) << "nothing changed, nothing written again";

  rail0_bytes.Increment(4096);
  const std::string after_traffic = exposition.Render({registry});
  EXPECT_EQ(after_traffic, SerializedAtOnce(*registry));
  EXPECT_NE(after_traffic.find("bytes_total{rail=\"rail0\"} 4096"), std::string::npos);
  EXPECT_EQ(exposition.families_written(), 4u) << "only the counter that moved";

  auto& added = info.Add({{"gid", "fe80::2"}});
  added.Set(1);
  EXPECT_EQ(exposition.Render({registry}), SerializedAtOnce(*registry));
  info.Remove(&added);
  state.Add({{"rail", "rail0"}}).Set(0);
  EXPECT_EQ(exposition.Render({registry}), SerializedAtOnce(*registry));
  EXPECT_EQ(exposition.families_written(), 7u) << "a series added, then removed, a state changed";
}

TEST(Exposition, AFamilyThatGoesAndComesBackIsWrittenAgain) {
  auto always = std::make_shared<prometheus::Registry>();
  prometheus::BuildGauge().Name("always").Help("h").Register(*always).Add({}).Set(2);
  auto sometimes = std::make_shared<prometheus::Registry>();
  prometheus::BuildGauge().Name("sometimes").Help("h").Register(*sometimes).Add({}).Set(3);
  Exposition exposition;
  exposition.Render({always, sometimes});
  const std::string without = exposition.Render({always});
  EXPECT_EQ(without.find("sometimes"), std::string::npos) << without;
  const std::string again = exposition.Render({always, sometimes});
  EXPECT_NE(again.find("sometimes 3"), std::string::npos) << again;
  EXPECT_EQ(exposition.families_written(), 3u) << "'sometimes' was forgotten while it was gone";
}

TEST(Exposition, ANameThatComesTwiceIsWrittenTwice) {
  auto first = std::make_shared<prometheus::Registry>();
  prometheus::BuildGauge().Name("twice").Help("h").Register(*first).Add({{"a", "1"}}).Set(1);
  auto second = std::make_shared<prometheus::Registry>();
  prometheus::BuildGauge().Name("twice").Help("h").Register(*second).Add({{"a", "2"}}).Set(2);
  Exposition exposition;
  for (int scrape = 0; scrape < 3; ++scrape) {
    const std::string text = exposition.Render({first, second});
    EXPECT_NE(text.find("twice{a=\"1\"} 1"), std::string::npos) << text;
    EXPECT_NE(text.find("twice{a=\"2\"} 2"), std::string::npos) << text;
  }
}

TEST(Exposition, GzipRoundTrips) {
  std::string text;
  for (int i = 0; i < 5000; ++i)
    text += "rail_port_up{device=\"mlx5_" + std::to_string(i) + "\"} 1\n";
  const std::string compressed = Gzip(text);
  EXPECT_LT(compressed.size(), text.size() / 4);
  EXPECT_EQ(Gunzip(compressed), text);
  EXPECT_EQ(Gunzip(Gzip("")), "");
}

TEST(Exposition, AcceptEncodingAsScrapersSendIt) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("identity, gzip"));
  EXPECT_TRUE(AcceptsGzip("gzip;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("deflate, *"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip; q=0.0"));
  EXPECT_FALSE(AcceptsGzip("x-gzip2"));
}

}  // namespace
}  // namespace rail::web::detail
