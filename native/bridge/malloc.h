// Resident memory under glibc's default allocator policy (see malloc.cpp).
#pragma once

#include <cstdint>

namespace lamer {

/** Bytes of CPU tensor memory that JS just disposed; every 64 MiB of them the heap's free pages go back (malloc_trim). */
void NoteDisposedBytes(int64_t bytes);

}  // namespace lamer
