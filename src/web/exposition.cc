#include "exposition.h"

#include <prometheus/text_serializer.h>
#include <zlib.h>

#include <sstream>
#include <stdexcept>

namespace rail::web::detail {

std::string RenderExposition(const std::vector<std::weak_ptr<prometheus::Collectable>>& metrics) {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& weak : metrics) {
    const std::shared_ptr<prometheus::Collectable> collectable = weak.lock();
    if (!collectable) continue;
    std::vector<prometheus::MetricFamily> collected = collectable->Collect();
    families.insert(families.end(), std::make_move_iterator(collected.begin()),
                    std::make_move_iterator(collected.end()));
  }
  std::ostringstream text;
  prometheus::TextSerializer().Serialize(text, families);
  return std::move(text).str();
}

namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// One coding of the list ("gzip;q=0.8"): whether it names gzip (or *) with a weight above 0.
bool AdmitsGzip(std::string_view coding) {
  const std::size_t semicolon = coding.find(';');
  const std::string_view name = Trim(coding.substr(0, semicolon));
  if (name != "gzip" && name != "*") return false;
  if (semicolon == std::string_view::npos) return true;
  std::string_view parameter = Trim(coding.substr(semicolon + 1));
  if (parameter.substr(0, 2) != "q=") return true;
  parameter.remove_prefix(2);
  return parameter.find_first_not_of("0.") != std::string_view::npos;
}

}  // namespace

bool AcceptsGzip(std::string_view accept_encoding) {
  while (!accept_encoding.empty()) {
    const std::size_t comma = accept_encoding.find(',');
    if (AdmitsGzip(accept_encoding.substr(0, comma))) return true;
    if (comma == std::string_view::npos) break;
    accept_encoding.remove_prefix(comma + 1);
  }
  return false;
}

std::string Gzip(std::string_view text) {
  z_stream stream{};
  // 15 + 16: the largest window, with a gzip header and trailer instead of zlib's. Level 1: an
  // exposition is repetitive text that the fastest level already shrinks about sevenfold, for a
  // third of the default level's CPU.
  if (deflateInit2(&stream, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("zlib: deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) throw std::runtime_error("zlib: deflate did not finish");
  return out;
}

}  // namespace rail::web::detail
