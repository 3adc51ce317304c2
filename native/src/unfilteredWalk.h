// The unfiltered walk of level 0 (the fixed cost of a cheap query): hnswlib's searchBaseLayerST without a
// filter or stop condition, step for step (the same distances, pushes and pops in the same order, so the same
// answer), with two changes in how memory is read. The unvisited neighbours of the node being expanded are
// gathered first, so that prefetches go to the elements whose distance is computed next (hnswlib prefetches
// the next neighbour whether visited or not), and each prefetch covers the element's whole vector (hnswlib's
// covers its first cache line, a fraction of a binary16 vector of a hundred dimensions or more).
//
// Included by searches.h after filteredSearch.h (whose descent it shares); reaches the graph only through
// hnswlib's members, as filteredSearch.h does.

#pragma once

#include <cstddef>
#include <queue>
#include <utility>
#include <vector>

#include "hnswlib/hnswlib.h"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define ARKIVECTOR_PREFETCH(p) _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0)
#else
#define ARKIVECTOR_PREFETCH(p) __builtin_prefetch(p)
#endif

namespace arkivector_walk {

using Hnsw = hnswlib::HierarchicalNSW<float>;
using hnswlib::tableint;
using Pair = std::pair<float, tableint>;
using Top = std::priority_queue<Pair, std::vector<Pair>, Hnsw::CompareByFirst>;

/** How many of the gathered neighbours ahead of the one being scored are prefetched. */
constexpr size_t PREFETCH_AHEAD = 4;

/** Prefetches an element's vector (`bytes` from its data offset), line by line. */
inline void prefetchData(const Hnsw& h, tableint id, size_t bytes) {
  const char* p = h.data_level0_memory_ + id * h.size_data_per_element_ + h.offsetData_;
  for (size_t off = 0; off < bytes; off += 64) ARKIVECTOR_PREFETCH(p + off);
}

/**
 * The ef nearest elements to `q` (an encoded element) reachable from `ep`, by the graph's distance, as
 * searchBaseLayerST<bare> returns them (a max-heap, farthest on top).
 * @tparam bare no element is deleted (hnswlib's bare_bone_search): every visited element may be kept
 */
template <bool bare>
Top level0(const Hnsw& h, tableint ep, const void* q, size_t ef) {
  hnswlib::VisitedList* vl = h.visited_list_pool_->getFreeVisitedList();
  hnswlib::vl_type* visited = vl->mass;
  const hnswlib::vl_type tag = vl->curV;
  const size_t dataBytes = h.data_size_;
  auto dist = [&](tableint id) { return h.fstdistfunc_(q, h.getDataByInternalId(id), h.dist_func_param_); };

  // Room made once (a heap's order does not depend on its capacity): growing by doubling cost a few
  // allocations per query.
  std::vector<Pair> room;
  room.reserve(ef + 1);
  Top top(Hnsw::CompareByFirst(), std::move(room));
  room = std::vector<Pair>();
  room.reserve(2 * ef + h.maxM0_);
  Top candidates(Hnsw::CompareByFirst(), std::move(room));  // by negated distance: nearest on top
  float lowerBound;
  if (bare || !h.isMarkedDeleted(ep)) {
    const float d = dist(ep);
    lowerBound = d;
    top.emplace(d, ep);
    candidates.emplace(-d, ep);
  } else {
    lowerBound = std::numeric_limits<float>::max();
    candidates.emplace(-lowerBound, ep);
  }
  visited[ep] = tag;

  std::vector<tableint> fresh;
  fresh.reserve(h.maxM0_ + 1);
  while (!candidates.empty()) {
    const Pair current = candidates.top();
    const float candidateDist = -current.first;
    if (bare ? candidateDist > lowerBound : candidateDist > lowerBound && top.size() == ef) break;
    candidates.pop();

    unsigned* list = h.get_linklist0(current.second);
    const size_t size = h.getListCount(list);
    const tableint* ids = reinterpret_cast<const tableint*>(list + 1);
    // Marking while gathering is what hnswlib's loop does one neighbour at a time: a link list holds
    // each id once, so no neighbour's test sees another's mark earlier than hnswlib's would.
    fresh.clear();
    for (size_t j = 0; j < size; j++) {
      const tableint id = ids[j];
      if (visited[id] == tag) continue;
      visited[id] = tag;
      fresh.push_back(id);
    }
    const size_t n = fresh.size();
    for (size_t j = 0; j < n && j < PREFETCH_AHEAD; j++) prefetchData(h, fresh[j], dataBytes);
    for (size_t j = 0; j < n; j++) {
      if (j + PREFETCH_AHEAD < n) prefetchData(h, fresh[j + PREFETCH_AHEAD], dataBytes);
      const tableint id = fresh[j];
      const float d = dist(id);
      if (top.size() < ef || lowerBound > d) {
        candidates.emplace(-d, id);
        ARKIVECTOR_PREFETCH(h.data_level0_memory_ + candidates.top().second * h.size_data_per_element_ +
                            h.offsetLevel0_);
        if (bare || !h.isMarkedDeleted(id)) top.emplace(d, id);
        while (top.size() > ef) top.pop();
        if (!top.empty()) lowerBound = top.top().first;
      }
    }
  }
  h.visited_list_pool_->releaseVisitedList(vl);
  return top;
}

}  // namespace arkivector_walk
