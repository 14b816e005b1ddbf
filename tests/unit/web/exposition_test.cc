#include "web/exposition.h"

#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <zlib.h>

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
  const std::string text = RenderExposition({first, gone, second});
  const auto first_at = text.find("first_total 3");
  const auto second_at = text.find("second_total{a=\"b\"} 0");
  ASSERT_NE(first_at, std::string::npos) << text;
  ASSERT_NE(second_at, std::string::npos) << text;
  EXPECT_LT(first_at, second_at);
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
