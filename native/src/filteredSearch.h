// The filtered walk of the native engine, ACORN-style (Patel et al., SIGMOD 2024,
// "ACORN-1" on an unmodified HNSW graph): the walk moves only through allowed elements, reaching past a
// neighbour that is not allowed to that neighbour's own neighbours (two hops), and starts from allowed
// entry points. hnswlib's own filtered walk (searchKnn with a functor) moves through every element and
// only keeps the allowed ones, so its work grows like ef / selectivity and it crawls the graph when the
// allowed set lies away from the query (ARCHITECTURE.md §10.4). Here the distance is computed for allowed
// elements only; elements that are not allowed cost a bitset test each.
//
// Entry points: hnswlib's greedy descent of the upper layers (unfiltered: it lands near the query), the
// allowed elements within two hops of where it lands, and a strided sample of allowed elements over the
// whole index (so an allowed set in another region of the space is entered from inside itself), whose
// best few first climb to their local best unless the descent landed among allowed elements.
//
// Included by searches.h; reaches the graph only through hnswlib's accessors.

#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "hnswlib/hnswlib.h"

namespace arkivector_filtered {

using Hnsw = hnswlib::HierarchicalNSW<float>;
using hnswlib::tableint;
using Pair = std::pair<float, tableint>;

/** How many allowed elements the strided sample looks for, and how many ids it may test at most. */
constexpr size_t SAMPLE_WANT = 128;
constexpr size_t SAMPLE_MAX_TRIES = 16384;
/**
 * The descent landed among allowed elements when its two-hop neighbourhood holds at least this share of
 * the allowed elements the set's global share predicts (and at least one).
 */
constexpr double LANDED_SHARE = 0.25;
/** How many of the best sampled entries climb before the beam, and how far each may climb. */
constexpr size_t CLIMB_SEEDS = 8;
constexpr size_t CLIMB_MAX_STEPS = 16;
/** How many of an expansion's finds ahead of the one being scored are prefetched. */
constexpr size_t PREFETCH_AHEAD = 4;

/** Prefetches an element's vector (`bytes` from its data offset), line by line. */
inline void prefetchData(const Hnsw& h, tableint id, size_t bytes) {
  const char* p = h.data_level0_memory_ + id * h.size_data_per_element_ + h.offsetData_;
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off);
}

/**
 * Where the descent lands among allowed elements, the width is ef × (the share of allowed elements around
 * the landing) × scale, between minEf and ef: a sparse set around the query is walked as a small graph,
 * where a narrow beam finds its nearest at a fraction of the width, while
 * a dense one is walked like the whole graph and needs the whole width. scale 0: always ef.
 */
struct Near {
  double scale = 0;
  size_t minEf = 1;
};

struct Stats {
  size_t checks = 0;     // allowed tests
  size_t distances = 0;  // distance computations
  bool landed = false;    // the descent landed among allowed elements (a set spread like the data near q)
};

/**
 * Greedy descent of the upper layers from the entry point, as hnswlib's searchKnn does (unfiltered):
 * the element of level 1 nearest to the query, and its distance.
 * @param dist float(tableint): the distance to the query
 */
template <typename Distance>
std::pair<tableint, float> descend(const Hnsw& h, Distance& dist) {
  tableint cur = h.enterpoint_node_;
  float curDist = dist(cur);
  for (int level = h.maxlevel_; level > 0; level--) {
    bool changed = true;
    while (changed) {
      changed = false;
      unsigned* list = h.get_linklist(cur, level);
      const size_t size = h.getListCount(list);
      const tableint* ids = reinterpret_cast<const tableint*>(list + 1);
      for (size_t i = 0; i < size; i++) {
        const float d = dist(ids[i]);
        if (d < curDist) {
          curDist = d;
          cur = ids[i];
          changed = true;
        }
      }
    }
  }
  return {cur, curDist};
}

/**
 * The ef nearest allowed elements (internal ids, nearest last in the heap's pop order), by the graph's
 * binary16 distance to `q` (an encoded element).
 * @param allowed bool(tableint): the element may be returned (not deleted, passes the filter)
 * @param passing how many elements are allowed (an estimate is fine): sizes the entry sample
 * @param farEf the width instead of `ef` when the descent does not land among allowed elements (the set
 *   lies away from the query, where the walk needs a wider beam); 0: return nothing then
 * @param near how the width narrows where the descent lands among allowed elements (see Near)
 */
template <typename Allowed>
std::priority_queue<Pair> search(const Hnsw& h, const void* q, size_t ef, size_t farEf, const Near& near,
                                 size_t passing, Allowed& allowed, Stats& stats) {
  std::priority_queue<Pair> top;  // max-heap: the worst kept result on top
  const size_t n = h.cur_element_count;
  if (n == 0 || ef == 0) return top;
  auto dist = [&](tableint id) {
    stats.distances++;
    return h.fstdistfunc_(q, h.getDataByInternalId(id), h.dist_func_param_);
  };
  auto ok = [&](tableint id) {
    stats.checks++;
    return allowed(id);
  };

  // Greedy descent of the upper layers, as searchKnn does (unfiltered).
  tableint cur;
  float curDist;
  std::tie(cur, curDist) = descend(h, dist);

  hnswlib::VisitedList* vl = h.visited_list_pool_->getFreeVisitedList();
  hnswlib::vl_type* visited = vl->mass;
  const hnswlib::vl_type tag = vl->curV;
  std::priority_queue<Pair, std::vector<Pair>, std::greater<Pair>> candidates;  // nearest on top

  auto offer = [&](tableint id, float d) {
    if (top.size() < ef || d < top.top().first) {
      candidates.emplace(d, id);
      top.emplace(d, id);
      if (top.size() > ef) top.pop();
    }
  };
  // Allowed ids among `id`'s level-0 neighbours, then among the neighbours of those that are not allowed
  // (each such neighbour's list whole, once: it is marked visited), while fewer than about maxM0 are
  // found; a neighbour whose list is not read stays unvisited, as does a 2-hop element that is not
  // allowed: either may still be expanded as a direct neighbour. The lists of the neighbours that are not
  // allowed, then the vectors whose distances follow, are prefetched (a random element's vector is 12
  // cache lines at 384 dimensions: the walk waited on them as the unfiltered one did before it prefetched).
  const size_t cap = h.maxM0_;
  const size_t dataBytes = h.data_size_;
  std::vector<tableint> found;
  std::vector<tableint> hops;
  std::vector<Pair> scored;  // the last expansion's finds with their distances
  found.reserve(2 * cap);
  hops.reserve(cap);
  auto expand = [&](tableint id) {
    found.clear();
    hops.clear();
    unsigned* list = h.get_linklist0(id);
    const size_t size = h.getListCount(list);
    const tableint* ids = reinterpret_cast<const tableint*>(list + 1);
    for (size_t i = 0; i < size; i++) {
      const tableint v = ids[i];
      if (visited[v] == tag) continue;
      visited[v] = tag;
      if (ok(v)) {
        found.push_back(v);
      } else {
        hops.push_back(v);
        __builtin_prefetch(h.get_linklist0(v));
      }
    }
    size_t hop = 0;
    for (; hop < hops.size() && found.size() < cap; hop++) {
      unsigned* list2 = h.get_linklist0(hops[hop]);
      const size_t size2 = h.getListCount(list2);
      const tableint* ids2 = reinterpret_cast<const tableint*>(list2 + 1);
      for (size_t j = 0; j < size2; j++) {
        const tableint w = ids2[j];
        if (visited[w] == tag) continue;
        if (ok(w)) {
          visited[w] = tag;
          found.push_back(w);
        }
      }
    }
    for (; hop < hops.size(); hop++) visited[hops[hop]] = tag - 1;
    scored.clear();
    const size_t count = found.size();
    for (size_t j = 0; j < count && j < PREFETCH_AHEAD; j++) prefetchData(h, found[j], dataBytes);
    for (size_t j = 0; j < count; j++) {
      if (j + PREFETCH_AHEAD < count) prefetchData(h, found[j + PREFETCH_AHEAD], dataBytes);
      const tableint v = found[j];
      const float d = dist(v);
      scored.emplace_back(d, v);
      offer(v, d);
    }
  };

  // Entry points: where the descent landed (if allowed) and its two-hop allowed neighbourhood…
  visited[cur] = tag;
  if (ok(cur)) offer(cur, curDist);
  const size_t checksBefore = stats.checks;
  expand(cur);
  // Where the descent landed among allowed elements about as often as the set's share predicts (a set
  // spread like the data, or the query inside the set), the beam from there suffices and the climbs below
  // are skipped. A set away from the query leaves the landing neighbourhood (almost) empty.
  const double expected = (double)(stats.checks - checksBefore) * (double)passing / (double)n;
  const bool landedAmongAllowed = (double)found.size() >= std::max(1.0, expected * LANDED_SHARE);
  stats.landed = landedAmongAllowed;
  const size_t tested = stats.checks - checksBefore;
  if (landedAmongAllowed && near.scale > 0 && tested > 0) {
    const double local = (double)found.size() / (double)tested;
    ef = std::min(ef, std::max(near.minEf, (size_t)std::ceil((double)ef * local * near.scale)));
    while (top.size() > ef) top.pop();
  }
  if (!landedAmongAllowed) {
    // The set lies away from the query (or is sparse around it): the caller chose a width for that case,
    // or none (it answers such sets otherwise, e.g. by the exact scan).
    ef = farEf;
    if (ef == 0) {
      h.visited_list_pool_->releaseVisitedList(vl);
      return std::priority_queue<Pair>();
    }
    while (top.size() > ef) top.pop();
  }
  // …and a strided sample over all ids (deterministic: the same query gives the same answer).
  std::vector<Pair> seeds;
  const size_t tries = std::min(n, std::min(SAMPLE_MAX_TRIES, SAMPLE_WANT * n / std::max<size_t>(1, passing) + 1));
  const size_t stride = std::max<size_t>(1, n / tries);
  size_t sampled = 0;
  for (size_t i = 0, id = stride / 2; i < tries && sampled < SAMPLE_WANT && id < n; i++, id += stride) {
    const tableint t = (tableint)id;
    if (visited[t] == tag) continue;
    if (!ok(t)) continue;
    visited[t] = tag;
    sampled++;
    const float d = dist(t);
    seeds.emplace_back(d, t);
    offer(t, d);
  }
  // An allowed set away from the query lies in several regions (clusters) of the space, and its nearest
  // elements are spread over them; the beam below would only deepen the region of its best entry. So
  // the best few seeds each climb first (to the nearest allowed neighbour while that improves), and
  // every region they reach enters the beam with its own local best.
  std::sort(seeds.begin(), seeds.end());
  const size_t climbs = landedAmongAllowed ? 0 : std::min(seeds.size(), CLIMB_SEEDS);
  for (size_t s = 0; s < climbs; s++) {
    tableint at = seeds[s].second;
    float atDist = seeds[s].first;
    for (size_t step = 0; step < CLIMB_MAX_STEPS; step++) {
      expand(at);
      tableint best = at;
      float bestDist = atDist;
      for (const Pair& f : scored)
        if (f.first < bestDist) {
          bestDist = f.first;
          best = f.second;
        }
      if (best == at) break;
      at = best;
      atDist = bestDist;
    }
  }

  while (!candidates.empty()) {
    const Pair c = candidates.top();
    if (top.size() >= ef && c.first > top.top().first) break;
    candidates.pop();
    expand(c.second);
  }
  h.visited_list_pool_->releaseVisitedList(vl);
  return top;
}

/** Adds (d, label) to `top`, a max-heap of the k nearest so far, ties by label. */
inline void keepNearest(std::priority_queue<std::pair<float, uint32_t>>& top, size_t k, float d, uint32_t label) {
  if (top.size() < k) {
    top.emplace(d, label);
  } else if (std::make_pair(d, label) < top.top()) {
    top.pop();
    top.emplace(d, label);
  }
}

/**
 * The distinct internal ids below `n` among idOf(0 … count − 1) (ids ≥ n, such as LabelMirror::NONE,
 * skipped), ascending: memory order for scanIds. Through a bitset over the ids when the count is a fair
 * share of n (linear: sorting 10,000 ids cost more than a tenth of their scan), else sorted.
 */
template <typename IdOf>
void liveIds(size_t n, size_t count, IdOf idOf, std::vector<tableint>& ids) {
  ids.clear();
  if (count * 64 < n) {
    ids.reserve(count);
    for (size_t i = 0; i < count; i++) {
      const size_t id = idOf(i);
      if (id < n) ids.push_back((tableint)id);
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return;
  }
  std::vector<uint64_t> seen((n + 63) / 64, 0);
  size_t distinct = 0;
  for (size_t i = 0; i < count; i++) {
    const size_t id = idOf(i);
    if (id >= n) continue;
    uint64_t& word = seen[id >> 6];
    const uint64_t bit = (uint64_t)1 << (id & 63);
    distinct += (word & bit) == 0;
    word |= bit;
  }
  ids.reserve(distinct);
  for (size_t w = 0; w < seen.size(); w++)
    for (uint64_t bits = seen[w]; bits != 0; bits &= bits - 1) ids.push_back((tableint)(w * 64 + __builtin_ctzll(bits)));
}

/** How many elements ahead the exact scan prefetches (a few suffice: more or fewer change little). */
constexpr size_t SCAN_AHEAD = 4;

/**
 * An allowed set holding at least this share (in percent) of the ids between its first and last is
 * scanned whole over that span: every element's distance, the allowed ones kept. Past about a third of the
 * ids, reading memory in order with gaps costs more than reading all of it (the software prefetch then
 * only gets in the hardware's way); below, the allowed-only scan is cheaper. The threshold was measured
 * both ways in one process over random sets (docs/benchmarks.md).
 */
constexpr size_t SPAN_SCAN_MIN_PERCENT = 35;

/**
 * Adds the k nearest of `ids` (internal ids, sorted ascending: memory order) by `distance` to `top`, a
 * max-heap of (distance, label) holding at most k, ties by label. A sparse set is read element by element,
 * each vector prefetched a few elements ahead: the scan then streams instead of waiting on a cache miss per
 * element; a dense one is read whole over its span (see
 * SPAN_SCAN_MIN_PERCENT). Labels come from `labelOf` (the addon's mirror, not the element: one cache line
 * fewer per element).
 */
template <typename Distance, typename LabelOf>
void scanIds(const Hnsw& h, const std::vector<tableint>& ids, size_t k, Distance& distance, LabelOf labelOf,
             std::priority_queue<std::pair<float, uint32_t>>& top) {
  if (ids.empty()) return;
  const size_t first = ids.front();
  const size_t span = (size_t)ids.back() - first + 1;
  if (ids.size() * 100 >= span * SPAN_SCAN_MIN_PERCENT) {
    // Every id of the span is an element below cur_element_count (the ids are), so its memory is there to
    // read; a deleted or unlisted one's distance is computed and dropped. `ids` is sorted and distinct, so
    // the next listed id is the only one to compare with.
    size_t next = 0;
    for (size_t id = first; next < ids.size(); id++) {
      const float d = distance(h.getDataByInternalId((tableint)id));
      if (ids[next] != id) continue;
      keepNearest(top, k, d, labelOf((tableint)id));
      next++;
    }
    return;
  }
  const char* base = h.data_level0_memory_;
  const size_t stride = h.size_data_per_element_;
  // Every cache line of [offsetData_, label_offset_): the inverse norm and the halves (the last byte's
  // line too, which a step of 64 from an unaligned start can miss).
  const size_t from = h.offsetData_;
  const size_t to = h.label_offset_;
  for (size_t i = 0; i < ids.size(); i++) {
    if (i + SCAN_AHEAD < ids.size()) {
      const char* ahead = base + ids[i + SCAN_AHEAD] * stride;
      for (size_t at = from; at < to; at += 64) __builtin_prefetch(ahead + at);
      __builtin_prefetch(ahead + to - 1);
    }
    const tableint id = ids[i];
    keepNearest(top, k, distance(h.getDataByInternalId(id)), labelOf(id));
  }
}

}  // namespace arkivector_filtered
