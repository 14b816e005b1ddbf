// Releases of the UCX handle wrappers, endpoint closing, blob framing and small helpers shared by
// the probe side's files.
#include <time.h>

#include <optional>
#include <string>

#include "rail/probe/ucx_session.h"

namespace rail::probe {

namespace detail {

void ReleaseConfig(NoOwner, ucp_config_t* config) noexcept {
  ucp_config_release(config);
}
void ReleaseContext(NoOwner, ucp_context_h context) noexcept {
  ucp_cleanup(context);
}
void ReleaseWorker(NoOwner, ucp_worker_h worker) noexcept {
  ucp_worker_destroy(worker);
}
void ReleaseWorkerAddress(ucp_worker_h worker, ucp_address_t* address) noexcept {
  ucp_worker_release_address(worker, address);
}
void ReleaseMemory(ucp_context_h context, ucp_mem_h memory) noexcept {
  ucp_mem_unmap(context, memory);
}
void ReleaseRkeyBuffer(NoOwner, void* rkey_buffer) noexcept {
  ucp_rkey_buffer_release(rkey_buffer);
}
void ReleaseRemoteKey(NoOwner, ucp_rkey_h rkey) noexcept {
  ucp_rkey_destroy(rkey);
}

std::string UcxReason(ucs_status_t status) {
  return std::string("ucx:") + ucs_status_string(status);
}

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

}  // namespace detail

UcxEndpoint::UcxEndpoint(UcxEndpoint&& other) noexcept
    : worker_(other.worker_),
      endpoint_(std::exchange(other.endpoint_, nullptr)),
      failed_(other.failed_) {}

UcxEndpoint& UcxEndpoint::operator=(UcxEndpoint&& other) noexcept {
  if (this != &other) {
    Close(failed_, kDefaultCloseLimit);
    worker_ = other.worker_;
    endpoint_ = std::exchange(other.endpoint_, nullptr);
    failed_ = other.failed_;
  }
  return *this;
}

ucs_status_t UcxEndpoint::Close(bool force, std::chrono::nanoseconds limit) noexcept {
  ucp_ep_h endpoint = std::exchange(endpoint_, nullptr);
  failed_ = false;
  if (endpoint == nullptr) return UCS_OK;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  void* request = ucp_ep_close_nbx(endpoint, &param);
  if (request == nullptr) return UCS_OK;
  if (UCS_PTR_IS_ERR(request)) return UCS_PTR_STATUS(request);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  ucs_status_t status = UCS_INPROGRESS;
  while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS &&
         std::chrono::steady_clock::now() < deadline) {
    ucp_worker_progress(worker_);
  }
  // Freeing a request that is still in progress hands it to UCX, which releases it when it
  // completes (at the latest when the worker is destroyed).
  ucp_request_free(request);
  return status == UCS_INPROGRESS ? UCS_ERR_TIMED_OUT : status;
}

}  // namespace rail::probe
