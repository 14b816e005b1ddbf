#include "probe/ucx/memory.h"

#include <cstring>
#include <optional>
#include <string_view>

#include "probe/ucx/blob.h"

namespace rail::probe {

bool UcxLocalBuffer::Map(ucp_context_h context, std::size_t bytes, std::string* error_reason,
                         std::string* error_message) {
  ucp_mem_map_params_t map_params{};
  map_params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                          UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  map_params.address = nullptr;
  map_params.length = bytes;
  map_params.flags = UCP_MEM_MAP_ALLOCATE;
  return MapWith(context, map_params, /*touch=*/true, error_reason, error_message);
}

bool UcxLocalBuffer::Register(ucp_context_h context, void* address, std::size_t bytes,
                              ucs_memory_type_t memory_type, std::string* error_reason,
                              std::string* error_message) {
  ucp_mem_map_params_t map_params{};
  map_params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                          UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
  map_params.address = address;
  map_params.length = bytes;
  map_params.memory_type = memory_type;
  return MapWith(context, map_params, /*touch=*/memory_type == UCS_MEMORY_TYPE_HOST, error_reason,
                 error_message);
}

bool UcxLocalBuffer::MapWith(ucp_context_h context, const ucp_mem_map_params_t& map_params,
                             bool touch, std::string* error_reason, std::string* error_message) {
  const std::size_t bytes = map_params.length;
  ucp_mem_h raw_memory = nullptr;
  ucs_status_t status = ucp_mem_map(context, &map_params, &raw_memory);
  if (status != UCS_OK) {
    return detail::FailUcx(error_reason, error_message, status,
                           "ucp_mem_map of " + std::to_string(bytes) + " bytes");
  }
  memory_ = UcxMemory(context, raw_memory);
  ucp_mem_attr_t attributes{};
  attributes.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
  status = ucp_mem_query(raw_memory, &attributes);
  if (status != UCS_OK) {
    return detail::FailUcx(error_reason, error_message, status, "ucp_mem_query");
  }
  data_ = attributes.address;
  bytes_ = bytes;
  // Touch every page now, so that page faults do not land in the first timed operation.
  if (touch) std::memset(data_, 0, bytes);

  void* packed = nullptr;
  std::size_t packed_length = 0;
  status = ucp_rkey_pack(context, raw_memory, &packed, &packed_length);
  if (status != UCS_OK) {
    return detail::FailUcx(error_reason, error_message, status, "ucp_rkey_pack");
  }
  packed_key_.handle = {detail::NoOwner{}, packed};
  packed_key_.length = packed_length;
  packed_key_blob_ =
      detail::FrameBlob('K', std::string_view(static_cast<const char*>(packed), packed_length));
  return true;
}

std::uint64_t UcxLocalBuffer::address() const {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(data_));
}

void UcxLocalBuffer::reset() {
  packed_key_.handle.reset();
  memory_.reset();
}

void UcxLocalBuffer::Leak() {
  detail::KeepForever(packed_key_.handle.release());
  detail::KeepForever(memory_.release());
}

bool UcxRemoteBuffer::Unpack(ucp_ep_h endpoint, const std::string& packed_key_blob,
                             std::uint64_t address, std::size_t bytes, std::string* error_reason,
                             std::string* error_message) {
  std::string why;
  const std::optional<std::string> packed = detail::UnframeBlob('K', packed_key_blob, &why);
  if (!packed) return detail::Fail(error_reason, error_message, "invalid_blob", why);
  reset();
  ucp_rkey_h rkey = nullptr;
  const ucs_status_t status = ucp_ep_rkey_unpack(endpoint, packed->data(), &rkey);
  if (status != UCS_OK) {
    return detail::FailUcx(error_reason, error_message, status, "ucp_ep_rkey_unpack");
  }
  key_ = UcxRemoteKey(detail::NoOwner{}, rkey);
  address_ = address;
  bytes_ = bytes;
  return true;
}

void UcxRemoteBuffer::reset() {
  key_.reset();
  address_ = 0;
  bytes_ = 0;
}

void UcxRemoteBuffer::Leak() {
  detail::KeepForever(key_.release());
  address_ = 0;
  bytes_ = 0;
}

}  // namespace rail::probe
