// Level 0's memory: hnswlib's malloc, realloc and free of its level-0 block, which native/build.mjs turns
// into these calls in the addon's copy of hnswlib's headers (so this file includes none of hnswlib).

#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace arkivector {

constexpr size_t HUGE_PAGE = (size_t)2 << 20;
constexpr size_t HUGE_PAGE_MIN = (size_t)16 << 20;

// Level 0 (every element's links and vector) is hnswlib's one block of capacity × element bytes, which
// hnswlib grows with realloc. glibc serves a block under its mmap threshold (which rises to 32 MiB with
// the first large free) from the heap, where realloc copies it whole and the old copy stays resident until
// trimmed. Here (Linux) the block is a reservation of address space (PROT_NONE: no memory, no commit
// charge) of LEVEL0_RESERVE_MIN × a power of LEVEL0_RESERVE_GROWTH, whose prefix up to the capacity is made
// readable and writable; a page costs memory only once an element is written to it. A capacity beyond the
// reservation moves the written pages to a larger one with mremap (page tables move, no byte is copied).
// The reservation's size lives beside hnswlib's pointer (a member the build adds: level0Reserved).
constexpr size_t LEVEL0_RESERVE_MIN = (size_t)64 << 20;
constexpr size_t LEVEL0_RESERVE_GROWTH = 4;

#if defined(__linux__)
inline size_t pageRound(size_t bytes) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  return (bytes + page - 1) / page * page;
}

// A reservation of `bytes` aligned to a huge page (so the kernel can back it with huge pages), or nullptr.
inline char* reserveAligned(size_t bytes) {
  void* p = mmap(nullptr, bytes + HUGE_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const uintptr_t base = (uintptr_t)p;
  const uintptr_t at = (base + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  if (at > base) munmap(p, at - base);
  const uintptr_t end = base + bytes + HUGE_PAGE;
  if (end > at + bytes) munmap((void*)(at + bytes), end - (at + bytes));
  return (char*)at;
}

inline size_t reserveFor(size_t bytes) {
  size_t r = LEVEL0_RESERVE_MIN;
  while (r < bytes) r *= LEVEL0_RESERVE_GROWTH;
  return r;
}
#endif

/** A level-0 block of `bytes` (hnswlib's malloc), its reservation's size into `reserved`. */
inline char* level0Alloc(size_t bytes, size_t& reserved) {
#if defined(__linux__)
  const size_t r = reserveFor(bytes);
  char* p = reserveAligned(r);
  if (p == nullptr) return nullptr;
  if (bytes > 0 && mprotect(p, pageRound(bytes), PROT_READ | PROT_WRITE) != 0) {
    munmap(p, r);
    return nullptr;
  }
  reserved = r;
  return p;
#else
  reserved = bytes;
  return static_cast<char*>(malloc(bytes));
#endif
}

/** The block grown (or shrunk) from `from` to `to` bytes (hnswlib's realloc); nullptr when out of memory. */
inline char* level0Grow(char* p, size_t from, size_t to, size_t& reserved) {
#if defined(__linux__)
  const size_t had = pageRound(from), want = pageRound(to);
  if (want <= had) {
    // Shrinking: the tail's pages go back and its addresses stay reserved.
    if (want < had) {
      madvise(p + want, had - want, MADV_DONTNEED);
      mprotect(p + want, had - want, PROT_NONE);
    }
    return p;
  }
  if (want <= reserved) return mprotect(p + had, want - had, PROT_READ | PROT_WRITE) == 0 ? p : nullptr;
  const size_t r = reserveFor(want);
  char* q = reserveAligned(r);
  if (q == nullptr) return nullptr;
  // Everything that can fail before the move: a failure leaves the block where it was, whole.
  if (mprotect(q + had, want - had, PROT_READ | PROT_WRITE) != 0 ||
      (had > 0 && mremap(p, had, had, MREMAP_MAYMOVE | MREMAP_FIXED, q) == MAP_FAILED)) {
    munmap(q, r);
    return nullptr;
  }
  // The moved prefix left its addresses; the rest of the old reservation goes too.
  munmap(p + had, reserved - had);
  reserved = r;
  return q;
#else
  (void)from;
  reserved = to;
  return static_cast<char*>(realloc(p, to));
#endif
}

/** hnswlib's free of level 0. */
inline void level0Free(char* p, size_t reserved) {
  if (p == nullptr) return;
#if defined(__linux__)
  munmap(p, reserved);
#else
  (void)reserved;
  free(p);
#endif
}

}  // namespace arkivector
