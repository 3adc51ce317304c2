// In-place replacement of a deleted element with old-neighbourhood repair (ARCHITECTURE.md §10.7). With
// allowReplaceDeleted, hnswlib's addPoint reuses a deleted element's slot through updatePoint, which links
// the new vector where it now lies and re-prunes the list of every former out-neighbour by its heuristic over
// the element's two-hop neighbourhood: lists that were not over full lose half their links, and the elements
// that linked *to* the old vector keep a link to a vector that may now lie anywhere, and recall falls well
// below a fresh build's once many elements are replaced. Here instead, before the slot is reused, each
// in-neighbour's link to the element becomes a link to the nearest of the element's former neighbours it
// lacks (degree and other links kept: the link that went through the element now goes around it), and then
// hnswlib links the new vector without re-pruning the old neighbours (updatePoint with probability 0), which
// keeps recall close to a fresh build's (test/engine/nativeRepair.test.ts; figures in docs/benchmarks.md).
//
// In-neighbours are looked for among the element's neighbours and their neighbours (HNSW links are mostly
// mutual, so nearly every in-neighbour is within two hops); a full scan would cost O(n·m) per replacement.
// Runs on the writer's thread, like every other write of this index.
#pragma once

#include <algorithm>
#include <vector>

#include "hnswlib/hnswlib.h"

namespace arkivector {

// Removes `gone` from the lists of its in-neighbours at every level it lives on, relinking each of them.
// Returns how many lists were rewritten.
inline size_t repairInNeighbours(hnswlib::HierarchicalNSW<float>& h, hnswlib::tableint gone) {
  using hnswlib::tableint;
  size_t rewritten = 0;
  const int top = h.element_levels_[gone];
  std::vector<tableint> old, near;
  for (int level = 0; level <= top; level++) {
    unsigned* list = h.get_linklist_at_level(gone, level);
    const size_t size = h.getListCount(list);
    old.assign(list + 1, list + 1 + size);
    // Candidates: the element's neighbours and theirs at this level.
    near = old;
    for (tableint n : old) {
      if (h.element_levels_[n] < level) continue;
      unsigned* nl = h.get_linklist_at_level(n, level);
      near.insert(near.end(), nl + 1, nl + 1 + h.getListCount(nl));
    }
    std::sort(near.begin(), near.end());
    near.erase(std::unique(near.begin(), near.end()), near.end());
    for (tableint c : near) {
      if (c == gone || h.element_levels_[c] < level) continue;
      unsigned* cl = h.get_linklist_at_level(c, level);
      const size_t cs = h.getListCount(cl);
      tableint* links = reinterpret_cast<tableint*>(cl + 1);
      if (std::find(links, links + cs, gone) == links + cs) continue;
      // The link through the replaced element becomes a link to the nearest of its former neighbours
      // not linked yet; the list keeps its other links and its degree (re-pruning a list that was not
      // over full would thin it out).
      const char* cd = h.getDataByInternalId(c);
      tableint best = gone;
      float bestDistance = 0;
      for (tableint x : old) {
        if (x == c || h.element_levels_[x] < level || std::find(links, links + cs, x) != links + cs) continue;
        const float d = h.fstdistfunc_(cd, h.getDataByInternalId(x), h.dist_func_param_);
        if (best == gone || d < bestDistance) {
          best = x;
          bestDistance = d;
        }
      }
      tableint* slot = std::find(links, links + cs, gone);
      if (best != gone) {
        *slot = best;
      } else {
        *slot = links[cs - 1];
        h.setListCount(cl, (unsigned short)(cs - 1));
      }
      rewritten++;
    }
  }
  return rewritten;
}

// Reuses the slot of the first deleted element (the one hnswlib's addPoint would take) for `label`, a
// label not in the index: the old neighbourhood is repaired, then the new vector linked in.
inline void replaceDeleted(hnswlib::HierarchicalNSW<float>& h, const void* data, hnswlib::labeltype label) {
  const hnswlib::tableint id = *h.deleted_elements.begin();
  repairInNeighbours(h, id);
  h.deleted_elements.erase(id);
  h.label_lookup_.erase(h.getExternalLabel(id));
  h.setExternalLabel(id, label);
  h.label_lookup_[label] = id;
  h.unmarkDeletedInternal(id);
  // Probability 0: no former out-neighbour is re-pruned (see the top of this file).
  h.updatePoint(data, id, 0.0f);
}

}  // namespace arkivector
