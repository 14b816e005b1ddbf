#include "exposition.h"

#include <prometheus/text_serializer.h>
#include <zlib.h>

#include <array>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace rail::web::detail {

namespace {

template <typename T>
void AppendBytes(const T& value, std::string* input) {
  input->append(reinterpret_cast<const char*>(&value), sizeof(value));
}

// Length first, so that ("ab", "c") and ("a", "bc") differ.
void AppendString(const std::string& text, std::string* input) {
  AppendBytes(text.size(), input);
  input->append(text);
}

// Every field of every sample, whatever the family's type: a field the serializer does not
// write can only make an unchanged family look changed, never the reverse. The fixed-size fields
// go in one append.
void AppendSample(const prometheus::ClientMetric& sample, std::string* input) {
  std::array<char, 128> fixed{};
  std::size_t used = 0;
  const auto put = [&](const auto& value) {
    std::memcpy(fixed.data() + used, &value, sizeof(value));
    used += sizeof(value);
  };
  put(sample.label.size());
  put(sample.counter.value);
  put(sample.gauge.value);
  put(sample.untyped.value);
  put(sample.timestamp_ms);
  put(sample.summary.sample_count);
  put(sample.summary.sample_sum);
  put(sample.summary.quantile.size());
  put(sample.histogram.sample_count);
  put(sample.histogram.sample_sum);
  put(sample.histogram.bucket.size());
  input->append(fixed.data(), used);
  for (const auto& label : sample.label) {
    AppendString(label.name, input);
    AppendString(label.value, input);
  }
  for (const auto& quantile : sample.summary.quantile) {
    AppendBytes(quantile.quantile, input);
    AppendBytes(quantile.value, input);
  }
  for (const auto& bucket : sample.histogram.bucket) {
    AppendBytes(bucket.cumulative_count, input);
    AppendBytes(bucket.upper_bound, input);
  }
}

XXH128_hash_t DigestOf(const prometheus::MetricFamily& family, std::string* input) {
  input->clear();
  AppendString(family.name, input);
  AppendString(family.help, input);
  AppendBytes(family.type, input);
  AppendBytes(family.metric.size(), input);
  for (const auto& sample : family.metric) AppendSample(sample, input);
  return XXH3_128bits(input->data(), input->size());
}

}  // namespace

std::string Exposition::Render(const std::vector<std::weak_ptr<prometheus::Collectable>>& metrics) {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& weak : metrics) {
    const std::shared_ptr<prometheus::Collectable> collectable = weak.lock();
    if (!collectable) continue;
    std::vector<prometheus::MetricFamily> collected = collectable->Collect();
    families.insert(families.end(), std::make_move_iterator(collected.begin()),
                    std::make_move_iterator(collected.end()));
  }
  const std::lock_guard lock(mutex_);
  std::unordered_map<std::string, Kept> kept_next;
  kept_next.reserve(families.size());
  std::string text;
  text.reserve(last_size_);
  for (auto& family : families) Append(std::move(family), &kept_next, &text);
  kept_ = std::move(kept_next);
  last_size_ = text.size();
  return text;
}

// Appends the family's text: the kept one when the family is unchanged, else prometheus-cpp's
// afresh. Taken out of kept_ either way, so a name that comes twice in one scrape is written twice.
void Exposition::Append(prometheus::MetricFamily family,
                        std::unordered_map<std::string, Kept>* kept_next, std::string* text) {
  const XXH128_hash_t digest = DigestOf(family, &digest_input_);
  auto node = kept_.extract(family.name);
  if (!node.empty() && XXH128_isEqual(node.mapped().digest, digest)) {
    text->append(node.mapped().text);
    kept_next->insert(std::move(node));
    return;
  }
  std::string name = family.name;
  std::vector<prometheus::MetricFamily> one;
  one.push_back(std::move(family));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, one);
  ++families_written_;
  Kept& fresh = (*kept_next)[std::move(name)];
  fresh = Kept{digest, std::move(out).str()};
  text->append(fresh.text);
}

std::size_t Exposition::families_written() const {
  const std::lock_guard lock(mutex_);
  return families_written_;
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
