// The searches an index answers, as plain C++ over an Index (so each can run on the main thread or on a
// thread of libuv's pool): the unfiltered walk, hnswlib's walk that hides labels, the ACORN-style
// filtered walk, and the exact top-k. Every answer carries the float32 query's distances (what an exact
// scan reports), nearest first; the walks themselves rank by the binary16 query.

#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <queue>
#include <utility>
#include <vector>

#include "filteredSearch.h"
#include "hnswlib/hnswlib.h"
#include "index.h"
#include "unfilteredWalk.h"

namespace arkivector {

/** Hits: (float32 query's distance, label), nearest first once written. */
using Hits = std::vector<std::pair<float, uint32_t>>;

// Allowed: labels whose slot (labelSlot[label], −1 = invisible) is ≥ 0 and, with a bitset, set in it.
class SlotFilter : public hnswlib::BaseFilterFunctor {
 public:
  const int32_t* labelSlot = nullptr;
  size_t labels = 0;
  const uint8_t* bits = nullptr;
  size_t slots = 0;
  size_t calls = 0;
  bool operator()(hnswlib::labeltype label) override {
    calls++;
    return allows(label);
  }
  // The test without the count or the virtual call (the filtered walk's, which counts its own).
  bool allows(hnswlib::labeltype label) const {
    if (label >= labels) return false;
    const int32_t s = labelSlot[label];
    if (s < 0) return false;
    if (bits == nullptr) return true;
    return (size_t)s < slots && ((bits[(size_t)s >> 3] >> (s & 7)) & 1) != 0;
  }
};

// An allowed set as a bitset over labels, which a filteredAsync work owns (copied when dispatched).
struct LabelBits {
  const std::vector<uint8_t>& bits;
  bool allows(uint32_t label) const {
    return (size_t)label < bits.size() * 8 && ((bits[label >> 3] >> (label & 7)) & 1) != 0;
  }
};

// The filtered walk's optional settings: farEf (0: no answer where the descent does not land among allowed
// elements) and near (the narrowing by the allowed share around the landing, with its floor).
struct WalkTuning {
  size_t farEf;
  arkivector_filtered::Near near;
};

// The k nearest of a walk's heap (internal ids, by binary16 distance) into hits: labels with the float32
// query's distances, nearest first.
template <typename Heap>
void rerank(Index& ix, const float* query, float invQuery, size_t k, Heap& top, Hits& hits) {
  auto& h = *ix.hnsw;
  while (top.size() > k) top.pop();
  hits.reserve(top.size());
  for (; !top.empty(); top.pop()) {
    const hnswlib::tableint id = top.top().second;
    hits.emplace_back(ix.space->exactDistance(query, invQuery, h.getDataByInternalId(id)),
                      (uint32_t)h.getExternalLabel(id));
  }
  std::sort(hits.begin(), hits.end());
}

// searchKnn's unfiltered walk at width ef (hnswlib's own reads the shared ef_; unfilteredWalk.h walks level
// 0 as searchBaseLayerST does), re-ranked by the float32 query's distances. `q` is the binary16 query (an
// encoded element).
inline void walkHits(Index& ix, const void* q, const float* query, float invQuery, size_t k, size_t ef, Hits& hits) {
  auto& h = *ix.hnsw;
  if (h.cur_element_count == 0) return;
  auto dist = [&](hnswlib::tableint id) { return h.fstdistfunc_(q, h.getDataByInternalId(id), h.dist_func_param_); };
  const hnswlib::tableint cur = arkivector_filtered::descend(h, dist).first;
  const size_t width = std::max(ef, k);
  auto top = h.getDeletedCount() == 0 ? arkivector_walk::level0<true>(h, cur, q, width)
                                      : arkivector_walk::level0<false>(h, cur, q, width);
  rerank(ix, query, invQuery, k, top, hits);
}

// hnswlib's own walk with a filter (searchKnn: through every element, keeping the allowed ones), on the
// main thread only (it sets the shared ef_), re-ranked by the float32 query's distances.
inline void hiddenWalkHits(Index& ix, const void* q, size_t k, size_t ef, SlotFilter& f, Hits& hits) {
  auto& h = *ix.hnsw;
  h.ef_ = ef;
  auto res = h.searchKnn(q, k, &f);
  hits.reserve(res.size());
  while (!res.empty()) {
    const hnswlib::labeltype label = res.top().second;
    res.pop();
    const uint32_t id = ix.labels().idOf(label);
    if (id == LabelMirror::NONE) continue;  // cannot happen for a checked index
    hits.emplace_back(ix.space->exactDistance(ix.query.data(), ix.invQuery, h.getDataByInternalId(id)),
                      (uint32_t)label);
  }
  std::sort(hits.begin(), hits.end());
}

// The ACORN-style walk of filteredSearch.h: the k nearest allowed elements with the float32 query's
// distances, nearest first. `q` is the binary16 query; the graph must not change while it runs. `f` is a
// SlotFilter (filteredSearch) or LabelBits (filteredAsync): anything with allows(label).
template <typename Filter>
Hits filteredHits(Index& ix, const void* q, const float* query, float invQuery, size_t k, size_t ef,
                  const WalkTuning& tuning, size_t passing, const Filter& f, arkivector_filtered::Stats& st) {
  auto& h = *ix.hnsw;
  const LabelMirror& labels = ix.labels();
  auto allowed = [&](hnswlib::tableint id) {
    const uint32_t label = labels.labelOf(id);
    return label != LabelMirror::NONE && f.allows(label);
  };
  const size_t farEf = tuning.farEf;
  auto top = arkivector_filtered::search(h, q, std::max(ef, k), farEf == 0 ? 0 : std::max(farEf, k), tuning.near,
                                         passing, allowed, st);
  Hits hits;
  rerank(ix, query, invQuery, k, top, hits);
  return hits;
}

// The exact top-k: every element not deleted (`all`), or the candidates' (labels) elements, looked up
// first, each once, then read in memory order with prefetch (filteredSearch.h scanIds); ties by label.
// `checks`: the elements or candidates considered.
inline std::priority_queue<std::pair<float, uint32_t>> exactTop(Index& ix, const float* query, float invQuery,
                                                                size_t k, bool all, const uint32_t* candidates,
                                                                size_t count, size_t& checks) {
  auto& h = *ix.hnsw;
  std::priority_queue<std::pair<float, uint32_t>> top;
  auto distance = [&](const void* x) { return ix.space->exactDistance(query, invQuery, x); };
  if (all) {
    const size_t n = h.cur_element_count;
    for (size_t id = 0; id < n; id++) {
      const uint32_t label = ix.labels().labelOf((hnswlib::tableint)id);
      if (label == LabelMirror::NONE) continue;  // deleted
      arkivector_filtered::keepNearest(top, k, distance(h.getDataByInternalId((hnswlib::tableint)id)), label);
    }
    checks = n;
    return top;
  }
  std::vector<hnswlib::tableint> ids;
  arkivector_filtered::liveIds(
      h.cur_element_count, count, [&](size_t i) { return ix.labels().idOf(candidates[i]); }, ids);
  arkivector_filtered::scanIds(h, ids, k, distance, [&](hnswlib::tableint id) { return ix.labels().labelOf(id); }, top);
  checks = count;
  return top;
}

// exactTop's heap as hits, nearest first.
inline void exactHits(Index& ix, const float* query, float invQuery, size_t k, bool all, const uint32_t* candidates,
                      size_t count, size_t& checks, Hits& hits) {
  auto top = exactTop(ix, query, invQuery, k, all, candidates, count, checks);
  hits.resize(top.size());
  for (size_t i = top.size(); i-- > 0; top.pop()) hits[i] = top.top();
}

}  // namespace arkivector
