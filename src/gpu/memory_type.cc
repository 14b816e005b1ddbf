#include "rail/gpu/memory.h"

namespace rail::gpu {

const char* MemoryTypeName(MemoryType type) {
  switch (type) {
    case MemoryType::kHost:
      return "host";
    case MemoryType::kCuda:
      return "cuda";
    case MemoryType::kCudaHost:
      return "cuda_host";
  }
  return "host";
}

std::optional<MemoryType> ParseMemoryType(const std::string& name) {
  for (MemoryType type : {MemoryType::kHost, MemoryType::kCuda, MemoryType::kCudaHost}) {
    if (name == MemoryTypeName(type)) return type;
  }
  return std::nullopt;
}

}  // namespace rail::gpu
