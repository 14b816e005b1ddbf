#include "probe/ucx/blob.h"

#include <cstddef>
#include <cstdint>

namespace rail::probe::detail {

namespace {

// Blob layout, all integers little endian:
//   0  "RLUX"   magic
//   4  kind     'W' or 'K'
//   5  version  1
//   6  2 bytes  zero
//   8  8 bytes  payload length
//   16 8 bytes  FNV-1a 64 of the payload
//   24 payload
constexpr std::string_view kBlobMagic = "RLUX";
constexpr unsigned char kBlobVersion = 1;
constexpr std::size_t kBlobHeaderBytes = 24;

std::uint64_t Fnv1a64(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char byte : bytes) {
    hash ^= static_cast<unsigned char>(byte);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

void AppendLittleEndian(std::string* out, std::uint64_t value) {
  for (int shift = 0; shift < 64; shift += 8) {
    out->push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

std::uint64_t ReadLittleEndian(std::string_view bytes) {
  std::uint64_t value = 0;
  for (std::size_t index = 0; index < 8; ++index) {
    value |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[index])) << (8 * index);
  }
  return value;
}

}  // namespace

std::string FrameBlob(char kind, std::string_view payload) {
  std::string blob(kBlobMagic);
  blob.push_back(kind);
  blob.push_back(static_cast<char>(kBlobVersion));
  blob.append(2, '\0');
  AppendLittleEndian(&blob, payload.size());
  AppendLittleEndian(&blob, Fnv1a64(payload));
  blob.append(payload);
  return blob;
}

std::optional<std::string> UnframeBlob(char kind, std::string_view blob, std::string* error) {
  const char* what = kind == 'W' ? "worker address" : "remote key";
  auto fail = [&](const std::string& why) -> std::optional<std::string> {
    *error = std::string(what) + " blob " + why;
    return std::nullopt;
  };
  if (blob.size() < kBlobHeaderBytes) return fail("is too short");
  if (!blob.starts_with(kBlobMagic)) return fail("has no rail_exporter UCX blob header");
  if (blob[4] != kind) return fail(std::string("is of kind '") + blob[4] + "'");
  if (static_cast<unsigned char>(blob[5]) != kBlobVersion) return fail("has an unknown version");
  const std::uint64_t length = ReadLittleEndian(blob.substr(8, 8));
  const std::string_view payload = blob.substr(kBlobHeaderBytes);
  if (length != payload.size()) return fail("is truncated or has trailing bytes");
  if (ReadLittleEndian(blob.substr(16, 8)) != Fnv1a64(payload)) return fail("fails its checksum");
  return std::string(payload);
}

}  // namespace rail::probe::detail
