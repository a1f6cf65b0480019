// The C allocator's policy for large blocks, chosen once when the addon loads (LAMER_MALLOC), and the trim that keeps
// resident memory bounded under the default policy.
//
// glibc serves a block above its mmap threshold with mmap (returned to the system at free) and a smaller one from
// the heap. By default the threshold moves up to the size of the largest block freed so far (up to 32 MiB), after
// which tensors of a megabyte or more come from the heap, where a loop that makes and frees same-size tensors can
// leave a hole per turn (libtorch asks for 64-byte aligned blocks, and small allocations land between them): 1,500
// create/read/dispose cycles of a 1 MB tensor grew to 1.7 GB resident here. The holes are free memory the heap keeps
// mapped, so under the default policy the addon gives their pages back with malloc_trim once every 64 MiB of CPU
// tensors that JS disposes (NoteDisposedBytes): the same loop then stays bounded, and a program that disposes little
// never pays for a trim.
//   LAMER_MALLOC=mmap-large  a fixed threshold of 1 MiB: blocks of a megabyte or more always come from mmap and go
//                            back at free (the same loop: 178 MB), at the cost of page faults on every large
//                            allocation (the train step of the small preset measured slower, 4.4-8.3 s against
//                            3.6-6.8 s per step on a busy 2-core machine);
//   LAMER_MALLOC=plain       glibc's own policy and no trim;
//   unset or anything else   glibc's own policy with the trim (the default).
#include "bridge/malloc.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace lamer {
namespace {

enum class Policy { kTrim, kMmapLarge, kPlain };

Policy ChoosePolicy() {
  const char* choice = std::getenv("LAMER_MALLOC");
  if (choice != nullptr && std::strcmp(choice, "mmap-large") == 0) return Policy::kMmapLarge;
  if (choice != nullptr && std::strcmp(choice, "plain") == 0) return Policy::kPlain;
  return Policy::kTrim;
}

struct AllocatorPolicy {
  Policy policy = ChoosePolicy();
  AllocatorPolicy() {
#if defined(__GLIBC__)
    if (policy == Policy::kMmapLarge) mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
  }
};

const AllocatorPolicy kAllocatorPolicy;
constexpr int64_t kTrimEvery = int64_t{64} << 20;
std::atomic<int64_t> gDisposedSinceTrim{0};

}  // namespace

void NoteDisposedBytes(int64_t bytes) {
#if defined(__GLIBC__)
  if (kAllocatorPolicy.policy != Policy::kTrim || bytes <= 0) return;
  const int64_t total = gDisposedSinceTrim.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (total < kTrimEvery) return;
  gDisposedSinceTrim.store(0, std::memory_order_relaxed);
  malloc_trim(0);
#else
  (void)bytes;
#endif
}

}  // namespace lamer
