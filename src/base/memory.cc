#include "rail/base/memory.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace rail::base {

void TuneMemoryAllocator() {
  // One malloc arena: a scrape's transient memory (the families, the exposition) then reuses what
  // startup and earlier scrapes freed instead of growing an arena per civetweb worker. On the
  // large bench tree this is a peak RSS of 18 MiB instead of 23 MiB; the threads that allocate
  // (scrapes, probe set-up) are few and rarely at once, and each keeps glibc's per-thread cache.
  // The probe worker starts a thread per request, which would otherwise each grow an arena.
  mallopt(M_ARENA_MAX, 1);
  // A fixed threshold: glibc otherwise raises it (up to 32 MiB) each time a large block is freed,
  // after which a probe's megabyte buffers come from the arenas and, fragmented, stay resident;
  // above the threshold they are mapped and returned to the kernel when the probe ends.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
}

void ReexecWithoutThreadCaches(char** argv) {
  // Why: civetweb serves each connection on a worker thread of its own (up to
  // --web.max-connections, 1000), and scrapes rotate through them. Each thread that served one
  // keeps up to 7 freed chunks per size class in its tcache, which no other thread can reuse:
  // after 7,000 scrapes the heap held 44 MiB (68 MiB RSS) with the cache and 6.5 MiB (30 MiB
  // RSS) without it, at the same scrape rate. The agent allocates little per second; the
  // cache's speed is not worth that.
  static constexpr char kVariable[] = "GLIBC_TUNABLES";
  static constexpr char kTunable[] = "glibc.malloc.tcache_count=0";
  const char* current = std::getenv(kVariable);
  std::string tunables = current == nullptr ? "" : current;
  if (tunables.find("glibc.malloc.tcache_count") != std::string::npos) return;
  tunables += (tunables.empty() ? "" : ":") + std::string(kTunable);
  // The resolved path, not /proc/self/exe: the process keeps its name (comm) for ps and pgrep.
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error || setenv(kVariable, tunables.c_str(), 1) != 0) return;
  execv(self.c_str(), argv);
  // Not reached unless exec failed (no /proc): go on as we are, with the cache.
}

}  // namespace rail::base
