// The telemetry path's body: every collectable's families in Prometheus' text format
// (prometheus-cpp's TextSerializer), gzipped with zlib when the scraper accepts it.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>
#include <xxhash.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rail::web::detail {

// The text of a scrape, written family by family by prometheus-cpp's TextSerializer, which puts
// every character of a label value through std::ostream (~12 ns a byte: the largest single cost
// of a scrape of a big host). Most families come back from one scrape to the next exactly as they
// were (info series, states, verdicts, error counters at zero), so each family's text is kept with
// a digest of everything the serializer writes from (XXH3-128 of the name, help, type, and every
// sample's labels, values and timestamp), and a family whose digest is unchanged is not written
// again. The bytes are prometheus-cpp's either way; the cost is one copy of the last exposition's
// text in memory. Thread-safe: scrapes that overlap take turns at writing.
class Exposition {
 public:
  // Collectables gone (their owner destroyed) are skipped.
  std::string Render(const std::vector<std::weak_ptr<prometheus::Collectable>>& metrics);

  // Families written afresh since construction (the others were reused): for tests.
  std::size_t families_written() const;

 private:
  struct Kept {
    XXH128_hash_t digest{};
    std::string text;
  };

  void Append(prometheus::MetricFamily family, std::unordered_map<std::string, Kept>* kept_next,
              std::string* text);

  mutable std::mutex mutex_;
  std::unordered_map<std::string, Kept> kept_;  // by family name: the last scrape's families
  std::string digest_input_;                    // reused between families
  std::size_t families_written_ = 0;
  std::size_t last_size_ = 0;
};

// Whether an Accept-Encoding header admits gzip ("gzip", "gzip;q=0.5", "*"; not "gzip;q=0").
bool AcceptsGzip(std::string_view accept_encoding);

// `text` as a gzip stream (RFC 1952).
std::string Gzip(std::string_view text);

}  // namespace rail::web::detail
