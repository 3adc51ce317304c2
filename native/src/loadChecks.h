// What a graph file read from disk must satisfy before it serves, checked in one pass over its links
// (O(elements + links), a small fraction of reading the file): every label in range and, among live
// elements, unique; every element's level within the graph's; every list no longer than its level allows,
// naming only elements that exist at that level, never the element itself, and no element twice; the entry
// point on the top level. hnswlib writes none of these, so a file that breaks one is damaged (bytes zeroed
// or overwritten behind a manifest that still matches), and the store is rebuilt from the chain.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "hnswlib/hnswlib.h"

namespace arkivector {

// Why `h` (just loaded) is damaged, or nullptr when every check holds.
inline const char* graphDamage(const hnswlib::HierarchicalNSW<float>& h, hnswlib::labeltype maxLabel) {
  const size_t n = h.cur_element_count;
  std::vector<uint32_t> liveLabels;
  liveLabels.reserve(n);
  // seenIn[id] == i + 1 while element i's list is read: a second sighting is a duplicate link.
  std::vector<uint32_t> seenIn(n, 0);
  for (size_t i = 0; i < n; i++) {
    const hnswlib::labeltype label = h.getExternalLabel((hnswlib::tableint)i);
    if (label > maxLabel) return "labels";
    if (!h.isMarkedDeleted((hnswlib::tableint)i)) liveLabels.push_back((uint32_t)label);
    const int level = h.element_levels_[i];
    if (level < 0 || level > h.maxlevel_) return "levels";
    for (int l = 0; l <= level; l++) {
      unsigned* list = l == 0 ? h.get_linklist0((unsigned)i) : h.get_linklist((unsigned)i, l);
      const size_t size = h.getListCount(list);
      if (size > (l == 0 ? h.maxM0_ : h.maxM_)) return "list size";
      const unsigned* ids = list + 1;
      const uint32_t mark = (uint32_t)i + 1;
      for (size_t j = 0; j < size; j++) {
        const unsigned id = ids[j];
        if (id >= n || h.element_levels_[id] < l) return "links";
        if (id == i) return "a link to itself";
        if (seenIn[id] == mark) return "a link twice in one list";
        seenIn[id] = mark;
      }
      // Lists of one element at different levels may name the same neighbour: forget this list's marks.
      for (size_t j = 0; j < size; j++) seenIn[ids[j]] = 0;
    }
  }
  if (n > 0 && h.element_levels_[h.enterpoint_node_] != h.maxlevel_) return "entry point";
  std::sort(liveLabels.begin(), liveLabels.end());
  if (std::adjacent_find(liveLabels.begin(), liveLabels.end()) != liveLabels.end()) return "a label twice";
  return nullptr;
}

}  // namespace arkivector
