#include "rail/base/memory.h"

#include <malloc.h>

namespace rail::base {

void TuneMemoryAllocator() {
  // One malloc arena: a scrape's transient memory (the families, the exposition) then reuses what
  // startup and earlier scrapes freed instead of growing an arena per thread that scrapes (the
  // endpoint's two handler threads, the fabric sampler). The threads that allocate are few and
  // rarely at once, and each keeps glibc's per-thread cache. The probe worker starts a thread per
  // request, which would otherwise each grow an arena.
  mallopt(M_ARENA_MAX, 1);
  // A fixed threshold: glibc otherwise raises it (up to 32 MiB) each time a large block is freed,
  // after which a probe's megabyte buffers come from the arenas and, fragmented, stay resident;
  // above the threshold they are mapped and returned to the kernel when the probe ends.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
}

}  // namespace rail::base
