// The telemetry path's body: every collectable's families in Prometheus' text format
// (prometheus-cpp's TextSerializer), gzipped with zlib when the scraper accepts it.
#pragma once

#include <prometheus/collectable.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rail::web::detail {

// Collectables gone (their owner destroyed) are skipped.
std::string RenderExposition(const std::vector<std::weak_ptr<prometheus::Collectable>>& metrics);

// Whether an Accept-Encoding header admits gzip ("gzip", "gzip;q=0.5", "*"; not "gzip;q=0").
bool AcceptsGzip(std::string_view accept_encoding);

// `text` as a gzip stream (RFC 1952).
std::string Gzip(std::string_view text);

}  // namespace rail::web::detail
