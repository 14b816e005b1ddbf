// Binary fields (nonces, proofs, UCX worker addresses, rkeys) travel inside JSON strings.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rail::peer {

// Lower-case hex, two digits per byte.
std::string HexEncode(std::string_view bytes);
// Accepts upper and lower case; nullopt on an odd length or a non-hex digit.
std::optional<std::string> HexDecode(std::string_view hex);

// Standard base64 with padding (RFC 4648 section 4), as OpenSSL writes it.
std::string Base64Encode(std::string_view bytes);
// Strict: nullopt on a length that is not a multiple of 4, a character outside the alphabet, or
// padding anywhere but at the end.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace rail::peer
