// arkivector's native engine: an N-API addon over hnswlib's own headers (the copy that ships inside
// hnswlib-node) with a half-precision space. Each element holds its binary16 values once, inside the
// graph, behind a float32 inverse norm; every distance is computed from binary16 by a kernel chosen at
// run time (kernels.h), so one build runs on any CPU. Filters arrive once per query as typed arrays (a
// label -> slot map and a bitset over slots): no call into JavaScript per visited node.
//
// This file is the N-API glue: the HalfIndex class and the module's functions, each reading and checking
// its arguments (napiArgs.h) before the index (index.h), its searches (searches.h) or the work on threads
// (async.h) see them. The searches take the query and an options object.

#include <node_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "async.h"
#include "errors.h"
#include "half.h"
#include "index.h"
#include "kernels.h"
#include "memory.h"
#include "napiArgs.h"
#include "searches.h"

namespace arkivector {
namespace {

Index* unwrap(napi_env env, napi_callback_info info, size_t want, napi_value* args, napi_value* self = nullptr) {
  size_t argc = want;
  napi_value me;
  NAPI_OK(napi_get_cb_info(env, info, &argc, args, &me, nullptr));
  for (size_t i = argc; i < want; i++) NAPI_OK(napi_get_undefined(env, &args[i]));
  void* p = nullptr;
  if (napi_unwrap(env, me, &p) != napi_ok || p == nullptr) throw JsError("not a HalfIndex");
  Index* ix = static_cast<Index*>(p);
  if (!ix->hnsw) throw JsError("the index is closed");
  if (self != nullptr) *self = me;
  return ix;
}

int metricArg(napi_env env, napi_value v) {
  const std::string m = stringArg(env, v, "metric");
  if (m == "cosine") return METRIC_COSINE;
  if (m == "ip") return METRIC_IP;
  if (m == "l2") return METRIC_L2;
  throw ArgError("metric must be cosine, ip or l2");
}

// Encodes a Float32Array or a Uint16Array of binary16 patterns into the index's scratch element.
const void* encodeArg(napi_env env, Index& ix, napi_value v, const char* what) {
  const VectorArg a = vectorArg(env, v, what);
  return ix.encode(a.data, a.length, a.halves, what);
}

void finalize(napi_env, void* data, void*) {
  Index* ix = static_cast<Index*>(data);
  ix->waitForReaders();  // an environment torn down with searches in flight
  delete ix;
}

// new HalfIndex({ metric, dim, maxElements, m, efConstruction, seed, kernel?, path? })
napi_value Construct(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    size_t argc = 1;
    napi_value arg, self;
    NAPI_OK(napi_get_cb_info(env, info, &argc, &arg, &self, nullptr));
    if (argc < 1 || typeOf(env, arg) != napi_object) throw ArgError("HalfIndex takes an options object");
    const int metric = metricArg(env, prop(env, arg, "metric"));
    const size_t dim = intArg(env, prop(env, arg, "dim"), "dim", 1, MAX_DIM);
    const size_t maxElements = intArg(env, prop(env, arg, "maxElements"), "maxElements", 1, MAX_ELEMENTS);
    napi_value kv = prop(env, arg, "kernel");
    int kernel = DEFAULT_KERNEL;
    if (!isMissing(env, kv)) {
      const int k = kernelByName(stringArg(env, kv, "kernel"), -1);
      if (k < 0) throw ArgError("kernel must be portable, avx2 or avx512");
      kernel = k < DETECTED ? k : DETECTED;  // never one the CPU cannot run
    }
    std::unique_ptr<Index> ix(new Index(metric, dim, kernel));
    napi_value pv = prop(env, arg, "path");
    if (!isMissing(env, pv)) {
      const std::string path = stringArg(env, pv, "path");
      napi_value mv = prop(env, arg, "m");
      ix->load(path, isMissing(env, mv) ? 0 : intArg(env, mv, "m", 2, MAX_M), maxElements);
    } else {
      const size_t m = intArg(env, prop(env, arg, "m"), "m", 2, MAX_M);
      const size_t efc = intArg(env, prop(env, arg, "efConstruction"), "efConstruction", 1, MAX_EF);
      const size_t seed = intArg(env, prop(env, arg, "seed"), "seed", 0, 4294967295.0);
      ix->create(maxElements, m, efc, seed);
    }
    Index* raw = ix.release();
    if (napi_wrap(env, self, raw, finalize, nullptr, nullptr) != napi_ok) {
      delete raw;
      throw JsError("cannot wrap the index");
    }
    return self;
  });
}

// addPoint(vector: Float32Array | Uint16Array, label, replaceDeleted = false)
napi_value AddPoint(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[3];
    Index* ix = unwrap(env, info, 3, a);
    ix->waitForReaders();
    const void* element = encodeArg(env, *ix, a[0], "vector");
    const size_t label = intArg(env, a[1], "label", 0, MAX_LABEL);
    bool replace = false;
    if (!isMissing(env, a[2])) NAPI_OK(napi_get_value_bool(env, a[2], &replace));
    ix->add(element, label, replace);
    return nullptr;
  });
}

napi_value MarkDelete(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[1];
    Index* ix = unwrap(env, info, 1, a);
    ix->waitForReaders();
    ix->remove(intArg(env, a[0], "label", 0, MAX_LABEL));
    return nullptr;
  });
}

napi_value Resize(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[1];
    Index* ix = unwrap(env, info, 1, a);
    ix->waitForReaders();
    ix->resize(intArg(env, a[0], "maxElements", 1, MAX_ELEMENTS));
    return nullptr;
  });
}

// ---- synchronous searches: search(query, options), filteredSearch(query, options), exactSearch(query, options) ----

// The output buffers of the synchronous searches (options labels, distances, stats): room for k labels
// and distances, at least 2 stats [hits, checks].
struct Outputs {
  uint32_t* labels;
  float* distances;
  int32_t* stats;
  size_t statsLength;
};

Outputs outputsArg(napi_env env, napi_value o, size_t k) {
  Typed l = typedArg(env, prop(env, o, "labels"), napi_uint32_array, "labels");
  Typed d = typedArg(env, prop(env, o, "distances"), napi_float32_array, "distances");
  Typed s = typedArg(env, prop(env, o, "stats"), napi_int32_array, "stats");
  if (s.length < 2) throw ArgError("stats must hold 2 entries");
  if (l.length < k || d.length < k) throw ArgError("labels and distances must hold k entries");
  return {static_cast<uint32_t*>(l.data), static_cast<float*>(d.data), static_cast<int32_t*>(s.data), s.length};
}

// Options labelSlot (Int32Array, label → slot, −1 invisible) and allowed (Uint8Array, a bitset over slots).
SlotFilter filterArg(napi_env env, napi_value o) {
  SlotFilter f;
  napi_value labelSlot = prop(env, o, "labelSlot");
  if (!isMissing(env, labelSlot)) {
    Typed t = typedArg(env, labelSlot, napi_int32_array, "labelSlot");
    f.labelSlot = static_cast<const int32_t*>(t.data);
    f.labels = t.length;
  }
  napi_value bits = prop(env, o, "allowed");
  if (!isMissing(env, bits)) {
    if (f.labelSlot == nullptr) throw ArgError("an allowed bitset needs the labelSlot map");
    Typed t = typedArg(env, bits, napi_uint8_array, "allowed");
    f.bits = static_cast<const uint8_t*>(t.data);
    f.slots = t.length * 8;
  }
  return f;
}

// Options farEf (default ef; 0: no answer where the descent does not land among allowed elements) and
// nearScale (default 0: not narrowed), with the narrowed width's floor min(ef, 2k).
WalkTuning tuningArg(napi_env env, napi_value o, size_t ef, size_t k) {
  napi_value farEf = prop(env, o, "farEf");
  napi_value nearScale = prop(env, o, "nearScale");
  WalkTuning t{isMissing(env, farEf) ? std::max(ef, k) : intArg(env, farEf, "farEf", 0, MAX_EF), {}};
  if (!isMissing(env, nearScale)) t.near.scale = numberArg(env, nearScale, "nearScale");
  if (!std::isfinite(t.near.scale) || t.near.scale < 0 || t.near.scale > 1e6) throw ArgError("nearScale must be ≥ 0");
  t.near.minEf = std::min(std::max(ef, k), 2 * k);
  return t;
}

// Writes sorted hits into the outputs (room for k checked), their count into stats[0], `checks` into stats[1].
void writeHits(const Hits& hits, Outputs& out, size_t checks) {
  const size_t n = hits.size();
  for (size_t i = 0; i < n; i++) {
    out.labels[i] = hits[i].second;
    out.distances[i] = hits[i].first;
  }
  out.stats[0] = (int32_t)n;
  out.stats[1] = (int32_t)std::min<size_t>(checks, 0x7fffffff);
}

// search(query, { k, ef, labels, distances, stats, labelSlot?, allowed? }): the unfiltered walk, or
// hnswlib's walk through the labels labelSlot (and allowed) let pass. stats[0] = hits, stats[1] = filter checks.
napi_value Search(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[2];
    Index* ix = unwrap(env, info, 2, a);
    const void* q = encodeArg(env, *ix, a[0], "query");
    napi_value o = optionsArg(env, a[1], "search");
    const size_t k = intArg(env, prop(env, o, "k"), "k", 1, MAX_K);
    const size_t ef = intArg(env, prop(env, o, "ef"), "ef", 1, MAX_EF);
    Outputs out = outputsArg(env, o, k);
    SlotFilter f = filterArg(env, o);
    Hits hits;
    if (f.labelSlot == nullptr) {
      walkHits(*ix, q, ix->query.data(), ix->invQuery, k, ef, hits);
      writeHits(hits, out, 0);
    } else {
      hiddenWalkHits(*ix, q, k, ef, f, hits);
      writeHits(hits, out, f.calls);
    }
    return nullptr;
  });
}

// filteredSearch(query, { k, ef, labels, distances, stats, labelSlot, allowed?, passing, farEf?, nearScale? }):
// the ACORN-style walk of filteredSearch.h over the allowed set (`passing` its size, an estimate is fine),
// at width farEf when the descent does not land among allowed elements, and where it does, narrowed by the
// allowed share around the landing × nearScale (at least min(ef, 2k)). stats[1] = allowed tests made;
// stats[2], when there, = 1 if the descent landed among allowed elements, else 0.
napi_value FilteredSearch(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[2];
    Index* ix = unwrap(env, info, 2, a);
    const void* q = encodeArg(env, *ix, a[0], "query");
    napi_value o = optionsArg(env, a[1], "filteredSearch");
    const size_t k = intArg(env, prop(env, o, "k"), "k", 1, MAX_K);
    const size_t ef = intArg(env, prop(env, o, "ef"), "ef", 1, MAX_EF);
    Outputs out = outputsArg(env, o, k);
    SlotFilter f = filterArg(env, o);
    if (f.labelSlot == nullptr) throw ArgError("filteredSearch needs the labelSlot map");
    const size_t passing = intArg(env, prop(env, o, "passing"), "passing", 0, MAX_ELEMENTS);
    const WalkTuning tuning = tuningArg(env, o, ef, k);
    arkivector_filtered::Stats st;
    const Hits hits = filteredHits(*ix, q, ix->query.data(), ix->invQuery, k, ef, tuning, passing, f, st);
    writeHits(hits, out, st.checks);
    if (out.statsLength >= 3) out.stats[2] = st.landed ? 1 : 0;
    return nullptr;
  });
}

// exactSearch(query, { k, labels, distances, stats, candidates? }): the exact top-k of every element not
// deleted, or of the candidates (a Uint32Array of labels) among them; ties by label. stats[1] = elements
// or candidates considered.
napi_value ExactSearch(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[2];
    Index* ix = unwrap(env, info, 2, a);
    encodeArg(env, *ix, a[0], "query");
    napi_value o = optionsArg(env, a[1], "exactSearch");
    const size_t k = intArg(env, prop(env, o, "k"), "k", 1, MAX_K);
    Outputs out = outputsArg(env, o, k);
    napi_value cv = prop(env, o, "candidates");
    const bool all = isMissing(env, cv);
    const Typed c = all ? Typed{} : typedArg(env, cv, napi_uint32_array, "candidates");
    size_t checks = 0;
    auto top = exactTop(*ix, ix->query.data(), ix->invQuery, k, all, static_cast<const uint32_t*>(c.data), c.length,
                        checks);
    const size_t n = top.size();
    for (size_t i = n; i-- > 0; top.pop()) {
      out.labels[i] = top.top().second;
      out.distances[i] = top.top().first;
    }
    out.stats[0] = (int32_t)n;
    out.stats[1] = (int32_t)std::min<size_t>(checks, 0x7fffffff);
    return nullptr;
  });
}

// ---- searches on threads (async.h): each → Promise<ArrayBuffer> ----

// searchAsync(query, { k, ef }): the unfiltered walk.
napi_value SearchAsync(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[2], self;
    Index* ix = unwrap(env, info, 2, a, &self);
    napi_value o = optionsArg(env, a[1], "searchAsync");
    std::unique_ptr<AsyncSearch> w(new AsyncSearch());
    w->kind = AsyncSearch::WALK;
    w->k = intArg(env, prop(env, o, "k"), "k", 1, MAX_K);
    w->ef = intArg(env, prop(env, o, "ef"), "ef", 1, MAX_EF);
    return dispatch(env, self, ix, std::move(w), vectorArg(env, a[0], "query"));
  });
}

// exactAsync(query, { k, candidates? }): the exact scan (the candidates are copied at dispatch).
napi_value ExactAsync(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[2], self;
    Index* ix = unwrap(env, info, 2, a, &self);
    napi_value o = optionsArg(env, a[1], "exactAsync");
    std::unique_ptr<AsyncSearch> w(new AsyncSearch());
    w->kind = AsyncSearch::EXACT;
    w->k = intArg(env, prop(env, o, "k"), "k", 1, MAX_K);
    napi_value cv = prop(env, o, "candidates");
    if (!isMissing(env, cv)) {
      Typed c = typedArg(env, cv, napi_uint32_array, "candidates");
      const uint32_t* labels = static_cast<const uint32_t*>(c.data);
      w->candidates.assign(labels, labels + c.length);
      w->hasCandidates = true;
    }
    return dispatch(env, self, ix, std::move(w), vectorArg(env, a[0], "query"));
  });
}

// filteredAsync(query, { k, ef, allowedLabels, passing, farEf?, nearScale? }): filteredSearch's walk over
// the labels whose bit is set in allowedLabels (a Uint8Array bitset over labels, copied at dispatch, so the
// thread reads nothing of the caller's); farEf and nearScale as filteredSearch takes them.
napi_value FilteredAsync(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[2], self;
    Index* ix = unwrap(env, info, 2, a, &self);
    napi_value o = optionsArg(env, a[1], "filteredAsync");
    std::unique_ptr<AsyncSearch> w(new AsyncSearch());
    w->kind = AsyncSearch::FILTERED;
    w->k = intArg(env, prop(env, o, "k"), "k", 1, MAX_K);
    w->ef = intArg(env, prop(env, o, "ef"), "ef", 1, MAX_EF);
    Typed bits = typedArg(env, prop(env, o, "allowedLabels"), napi_uint8_array, "allowedLabels");
    const uint8_t* b = static_cast<const uint8_t*>(bits.data);
    w->labelBits.assign(b, b + bits.length);
    w->passing = intArg(env, prop(env, o, "passing"), "passing", 0, MAX_ELEMENTS);
    w->tuning = tuningArg(env, o, w->ef, w->k);
    return dispatch(env, self, ix, std::move(w), vectorArg(env, a[0], "query"));
  });
}

// ---- the rest of HalfIndex ----

napi_value Save(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[1];
    Index* ix = unwrap(env, info, 1, a);
    ix->save(stringArg(env, a[0], "path"));
    return nullptr;
  });
}

// getHalves(label, out: Uint16Array): the vector stored under a label, as binary16 patterns.
napi_value GetHalves(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[2];
    Index* ix = unwrap(env, info, 2, a);
    const size_t label = intArg(env, a[0], "label", 0, MAX_LABEL);
    Typed out = typedArg(env, a[1], napi_uint16_array, "out");
    if (out.length < ix->dim) throw ArgError("out must hold dim entries");
    ix->copyHalves(label, static_cast<uint16_t*>(out.data));
    return nullptr;
  });
}

// info() → { count, capacity, deleted, kernel, elementBytes }
napi_value Info(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    Index* ix = unwrap(env, info, 0, nullptr);
    auto& h = *ix->hnsw;
    return objectOf(env, {{"count", num(env, (double)h.cur_element_count)},
                          {"capacity", num(env, (double)h.max_elements_)},
                          {"deleted", num(env, (double)h.getDeletedCount())},
                          {"kernel", str(env, KERNEL_NAMES[ix->kernel])},
                          {"elementBytes", num(env, (double)h.size_data_per_element_)}});
  });
}

// ---- module functions ----

// cpu() → { detected, default }: the best kernel this CPU runs and the one new indexes use.
napi_value Cpu(napi_env env, napi_callback_info) {
  return guarded(env, [&]() -> napi_value {
    return objectOf(env, {{"detected", str(env, KERNEL_NAMES[DETECTED])}, {"default", str(env, KERNEL_NAMES[DEFAULT_KERNEL])}});
  });
}

// encodeHalf(x): floatToHalf exposed for tests (one value at a time).
napi_value EncodeHalf(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    size_t argc = 1;
    napi_value v;
    NAPI_OK(napi_get_cb_info(env, info, &argc, &v, nullptr, nullptr));
    const double d = numberArg(env, v, "value");
    if (!std::isfinite(d)) throw ArgError("value is not finite");
    return num(env, floatToHalf((float)d));
  });
}

// mallocStats() → { heap, inUse, free, mmapped } in bytes (glibc's mallinfo2; all 0 elsewhere): what the
// memory measurement attributes between live native allocations and allocator slack.
napi_value MallocStats(napi_env env, napi_callback_info) {
  return guarded(env, [&]() -> napi_value {
    const MallocCounts c = mallocCounts();
    return objectOf(env, {{"heap", num(env, c.heap)},
                          {"inUse", num(env, c.inUse)},
                          {"free", num(env, c.free)},
                          {"mmapped", num(env, c.mmapped)}});
  });
}

// trimMalloc(): gives the C heap's free pages back to the system (releaseFreedPages).
napi_value TrimMalloc(napi_env env, napi_callback_info) {
  return guarded(env, [&]() -> napi_value {
    releaseFreedPages();
    return nullptr;
  });
}

std::once_flag INIT_ONCE;

// Process-wide tables and the kernel choice, once (the addon loads again in every worker thread).
void initOnce() {
  initHalfTable();
  initKernels();
}

napi_value Init(napi_env env, napi_value exports) {
  std::call_once(INIT_ONCE, initOnce);
  napi_property_descriptor methods[] = {
      {"addPoint", nullptr, AddPoint, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"markDelete", nullptr, MarkDelete, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"resize", nullptr, Resize, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"search", nullptr, Search, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"exactSearch", nullptr, ExactSearch, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"filteredSearch", nullptr, FilteredSearch, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"save", nullptr, Save, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"getHalves", nullptr, GetHalves, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"info", nullptr, Info, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"searchAsync", nullptr, SearchAsync, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"exactAsync", nullptr, ExactAsync, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"filteredAsync", nullptr, FilteredAsync, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_value cls;
  if (napi_define_class(env, "HalfIndex", NAPI_AUTO_LENGTH, Construct, nullptr,
                        sizeof(methods) / sizeof(methods[0]), methods, &cls) != napi_ok)
    return nullptr;
  napi_set_named_property(env, exports, "HalfIndex", cls);
  const std::pair<const char*, napi_callback> functions[] = {
      {"cpu", Cpu}, {"encodeHalf", EncodeHalf}, {"trimMalloc", TrimMalloc}, {"mallocStats", MallocStats}};
  for (const auto& [name, callback] : functions) {
    napi_value fn;
    napi_create_function(env, name, NAPI_AUTO_LENGTH, callback, nullptr, &fn);
    napi_set_named_property(env, exports, name, fn);
  }
  return exports;
}

}  // namespace
}  // namespace arkivector

NAPI_MODULE(NODE_GYP_MODULE_NAME, arkivector::Init)
