// The registered memory of a probe: this side's buffer, which the peer reads and writes through
// its packed remote key, and the peer's buffer as this side addresses it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "probe/ucx/handles.h"

namespace rail::probe {

// A buffer that UCX allocates and registers itself, so that it can pick memory its transports
// register best, and the remote key the peer needs for it (framed, see blob.h).
class UcxLocalBuffer {
 public:
  // Maps `bytes` and packs the remote key; false, and the reason and message, on failure.
  bool Map(ucp_context_h context, std::size_t bytes, std::string* error_reason,
           std::string* error_message);
  // Registers memory allocated elsewhere (a pinned host buffer, or device memory with
  // UCS_MEMORY_TYPE_CUDA), which must outlive the mapping. Device memory is not touched here.
  bool Register(ucp_context_h context, void* address, std::size_t bytes,
                ucs_memory_type_t memory_type, std::string* error_reason,
                std::string* error_message);

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  std::uint64_t address() const;
  const std::string& PackedKeyBlob() const { return packed_key_blob_; }

  // Releases the packed key, then the mapping.
  void reset();
  // Forgets both handles without releasing them (a quarantined side's).
  void Leak();

 private:
  bool MapWith(ucp_context_h context, const ucp_mem_map_params_t& map_params, bool touch,
               std::string* error_reason, std::string* error_message);

  UcxMemory memory_;
  void* data_ = nullptr;  // owned by memory_
  std::size_t bytes_ = 0;
  UcxRkeyBuffer packed_key_;  // after memory_: released first
  std::string packed_key_blob_;
};

// The peer's buffer: its remote key, unpacked on the endpoint it belongs to, its address and
// size. Empty until Unpack succeeds.
class UcxRemoteBuffer {
 public:
  bool Unpack(ucp_ep_h endpoint, const std::string& packed_key_blob, std::uint64_t address,
              std::size_t bytes, std::string* error_reason, std::string* error_message);

  ucp_rkey_h key() const { return key_.get(); }
  std::uint64_t address() const { return address_; }
  std::size_t bytes() const { return bytes_; }
  explicit operator bool() const { return static_cast<bool>(key_); }

  void reset();
  // Forgets the key without releasing it (a quarantined side's).
  void Leak();

 private:
  UcxRemoteKey key_;
  std::uint64_t address_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace rail::probe
