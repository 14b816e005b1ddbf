#include "thread_stack.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace rail::web::detail {
namespace {

// Kept below the current frame: the page of the calls made from here (madvise itself). Anything
// further down is dead once this function is running.
constexpr std::uintptr_t kMarginBytes = 4096;

}  // namespace

void ReleaseUnusedStack() {
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) != 0) return;
  void* lowest = nullptr;
  std::size_t size = 0;
  const int status = pthread_attr_getstack(&attributes, &lowest, &size);
  pthread_attr_destroy(&attributes);
  if (status != 0 || lowest == nullptr) return;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  volatile char marker = 0;  // where this frame is: the stack grows down towards `lowest`
  const auto frame = reinterpret_cast<std::uintptr_t>(&marker);
  const std::uintptr_t start = (reinterpret_cast<std::uintptr_t>(lowest) + page - 1) & ~(page - 1);
  if (frame < start + kMarginBytes + page) return;
  const std::uintptr_t end = (frame - kMarginBytes) & ~(page - 1);
  madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED);
}

}  // namespace rail::web::detail
