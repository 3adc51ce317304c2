// How the graph's memory is laid out and given back: level 0 in a reservation of address space that is made
// usable as the capacity grows (never copied, never touched before use), on transparent huge pages, the C
// heap's free pages returned after a resize, and glibc's own counts for the memory measurement.

#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "hnswlib/hnswlib.h"
#include "level0.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace arkivector {

// Level 0 on transparent huge pages where the kernel offers them on request (`madvise` mode, the common
// default): a search reads a few hundred elements scattered over the whole block, and the exact scan of an
// allowed set thousands, each on another 4 KiB page, so with small pages nearly every element read also
// misses the TLB. Blocks under HUGE_PAGE_MIN stay as they are (an empty or small collection must not round
// up to 2 MiB pages). The advice covers the usable prefix only (a huge page is made where an element is
// written, never ahead in the unused capacity); pages already written on small pages (a block that grew
// past HUGE_PAGE_MIN, `collapse`) are collapsed in place, whole huge pages inside the written elements only
// (MADV_COLLAPSE, Linux 6.1+: one 2 MiB region at a time).
#if defined(__linux__) && !defined(MADV_COLLAPSE)
#define MADV_COLLAPSE 25
#endif

inline void adviseHugePages(hnswlib::HierarchicalNSW<float>& h, bool collapse) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const size_t bytes = h.max_elements_ * h.size_data_per_element_;
  if (bytes < HUGE_PAGE_MIN) return;
  // The whole huge pages inside [p, p + length): madvise wants page-aligned ranges.
  auto inside = [](char* p, size_t length) {
    const uintptr_t from = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    const uintptr_t to = ((uintptr_t)p + length) & ~(uintptr_t)(HUGE_PAGE - 1);
    return std::pair<void*, size_t>((void*)from, to > from ? to - from : 0);
  };
  {
    const auto [at, length] = inside(h.data_level0_memory_, bytes);
    if (length > 0) madvise(at, length, MADV_HUGEPAGE);  // advice only: a refusal changes nothing
  }
  if (!collapse) return;
  const auto [at, length] = inside(h.data_level0_memory_, h.cur_element_count * h.size_data_per_element_);
  if (length > 0) madvise(at, length, MADV_COLLAPSE);
#else
  (void)h;
  (void)collapse;
#endif
}

// hnswlib's resizeIndex frees the element arrays it replaces (the link-list pointers, levels, the visited
// list). glibc keeps those pages when they came
// from its heap rather than their own mapping (its mmap threshold rises with every large free), so RSS
// would keep each old copy: give the free pages back after each resize (growth is geometric, so this
// runs O(log n) times).
inline void releaseFreedPages() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

/** The C heap as glibc's mallinfo2 counts it, in bytes (all 0 on other C libraries). */
struct MallocCounts {
  double heap = 0, inUse = 0, free = 0, mmapped = 0;
};

inline MallocCounts mallocCounts() {
  MallocCounts c;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  c.heap = (double)m.arena;
  c.inUse = (double)m.uordblks;
  c.free = (double)m.fordblks;
  c.mmapped = (double)m.hblkhd;
#endif
  return c;
}

}  // namespace arkivector
