// The framing of the blobs a probe side hands to its peer (worker address, packed remote key).
// UCX trusts what it parses; framed (magic, kind, length, checksum), a corrupted or foreign blob
// is refused before UCX sees it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rail::probe::detail {

// Kinds: 'W' worker address, 'K' packed remote key.
std::string FrameBlob(char kind, std::string_view payload);
// The payload, or nullopt with `error` set when the blob is not a well-formed blob of `kind`.
std::optional<std::string> UnframeBlob(char kind, std::string_view blob, std::string* error);

}  // namespace rail::probe::detail
