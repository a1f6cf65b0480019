// The C allocator's policy for large blocks, chosen once when the addon loads (LAMER_MALLOC).
//
// glibc serves a block above its mmap threshold with mmap (returned to the system at free) and a smaller one from
// the heap. By default the threshold moves up to the size of the largest block freed so far (up to 32 MiB), after
// which tensors of a megabyte or more come from the heap, where a loop that makes and frees same-size tensors can
// leave a hole per turn (libtorch asks for 64-byte aligned blocks, and small allocations land between them): 1,500
// create/read/dispose cycles of a 1 MB tensor grew to 1.7 GB resident here.
//   LAMER_MALLOC=mmap-large  a fixed threshold of 1 MiB: blocks of a megabyte or more always come from mmap and go
//                            back at free (the same loop: 178 MB), at the cost of page faults on every large
//                            allocation (the train step of the small preset measured slower, 4.4-8.3 s against
//                            3.6-6.8 s per step on a busy 2-core machine);
//   unset or anything else   glibc's own policy (the default: faster, and bounded in the training loops measured).
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

struct AllocatorPolicy {
  AllocatorPolicy() {
#if defined(__GLIBC__)
    const char* choice = std::getenv("LAMER_MALLOC");
    if (choice != nullptr && std::strcmp(choice, "mmap-large") == 0) mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
  }
};

const AllocatorPolicy kAllocatorPolicy;

}  // namespace
