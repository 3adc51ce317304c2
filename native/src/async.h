// Searches on threads: searchAsync, exactAsync and filteredAsync run their search (searches.h) on
// libuv's thread pool and resolve a Promise with an ArrayBuffer: n uint32 labels, then their n float32
// distances (the float32 query's, nearest first, as the synchronous calls write them); filteredAsync's
// ends with two more uint32, the allowed tests made and whether the descent landed among allowed
// elements (1 / 0). The query is encoded on the main thread at dispatch, into the work's own copy; the
// reader count taken then makes addPoint, markDelete and resize wait for the search to finish, so it reads
// the graph as it was at dispatch. A reference to the index object keeps it alive until the Promise
// settles.

#pragma once

#include <node_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "index.h"
#include "napiArgs.h"
#include "searches.h"

namespace arkivector {

struct AsyncSearch {
  enum Kind { WALK, EXACT, FILTERED };
  napi_async_work work = nullptr;
  napi_deferred deferred = nullptr;
  napi_ref self = nullptr;
  Index* ix = nullptr;
  Kind kind = WALK;
  size_t k = 0, ef = 0;
  std::vector<char> element;  // the binary16 query (inverse norm, halves)
  std::vector<float> query;   // the float32 query
  float invQuery = 0;
  // exactAsync: the candidates (labels), copied at dispatch.
  std::vector<uint32_t> candidates;
  bool hasCandidates = false;
  // filteredAsync: the allowed labels as a bitset the work owns, the walk's arguments, and its stats.
  std::vector<uint8_t> labelBits;
  size_t passing = 0;
  WalkTuning tuning{};
  size_t checks = 0;
  bool landed = false;
  Hits hits;
  std::string error;
};

inline void asyncSearch(AsyncSearch& w) {
  switch (w.kind) {
    case AsyncSearch::WALK:
      walkHits(*w.ix, w.element.data(), w.query.data(), w.invQuery, w.k, w.ef, w.hits);
      break;
    case AsyncSearch::EXACT: {
      size_t checks = 0;
      exactHits(*w.ix, w.query.data(), w.invQuery, w.k, !w.hasCandidates, w.candidates.data(), w.candidates.size(),
                checks, w.hits);
      break;
    }
    case AsyncSearch::FILTERED: {
      arkivector_filtered::Stats st;
      w.hits = filteredHits(*w.ix, w.element.data(), w.query.data(), w.invQuery, w.k, w.ef, w.tuning, w.passing,
                            LabelBits{w.labelBits}, st);
      w.checks = st.checks;
      w.landed = st.landed;
      break;
    }
  }
}

inline void asyncExecute(napi_env, void* data) {
  AsyncSearch& w = *static_cast<AsyncSearch*>(data);
  try {
    asyncSearch(w);
  } catch (const std::bad_alloc&) {
    w.error = "out of memory";
  } catch (const std::exception& e) {
    w.error = e.what();
  }
  // Notified under the lock: a finalizer waiting for the count may delete the index once it is released.
  std::lock_guard<std::mutex> lock(w.ix->readersLock);
  w.ix->readers--;
  w.ix->readersDone.notify_all();
}

inline void asyncComplete(napi_env env, napi_status status, void* data) {
  std::unique_ptr<AsyncSearch> w(static_cast<AsyncSearch*>(data));
  const bool filtered = w->kind == AsyncSearch::FILTERED;
  napi_value result = nullptr;
  std::string error = status == napi_ok ? w->error : "the search was cancelled";
  if (error.empty()) {
    const size_t n = w->hits.size();
    void* bytes = nullptr;
    if (napi_create_arraybuffer(env, 8 * n + (filtered ? 8 : 0), &bytes, &result) == napi_ok) {
      uint32_t* labels = static_cast<uint32_t*>(bytes);
      float* distances = reinterpret_cast<float*>(labels + n);
      for (size_t i = 0; i < n; i++) {
        labels[i] = w->hits[i].second;
        distances[i] = w->hits[i].first;
      }
      if (filtered) {
        labels[2 * n] = (uint32_t)std::min<size_t>(w->checks, 0x7fffffff);
        labels[2 * n + 1] = w->landed ? 1 : 0;
      }
    } else {
      error = "cannot allocate the answer";
    }
  }
  if (error.empty()) {
    napi_resolve_deferred(env, w->deferred, result);
  } else {
    napi_value code, message, err;
    napi_create_string_utf8(env, "ERR_ARKIVECTOR_NATIVE", NAPI_AUTO_LENGTH, &code);
    napi_create_string_utf8(env, ("arkivector native: " + error).c_str(), NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, code, message, &err);
    napi_reject_deferred(env, w->deferred, err);
  }
  napi_delete_reference(env, w->self);
  napi_delete_async_work(env, w->work);
}

// Encodes the query on the main thread into the work's copy, counts the reader, queues the work, and
// returns its Promise. `self` is the index object, kept alive until the Promise settles.
inline napi_value dispatch(napi_env env, napi_value self, Index* ix, std::unique_ptr<AsyncSearch> w,
                           const VectorArg& query) {
  ix->encode(query.data, query.length, query.halves, "query");
  w->ix = ix;
  w->element = ix->scratch;
  w->query = ix->query;
  w->invQuery = ix->invQuery;
  napi_value promise, name;
  NAPI_OK(napi_create_promise(env, &w->deferred, &promise));
  NAPI_OK(napi_create_string_utf8(env, "arkivector.search", NAPI_AUTO_LENGTH, &name));
  NAPI_OK(napi_create_reference(env, self, 1, &w->self));
  if (napi_create_async_work(env, nullptr, name, asyncExecute, asyncComplete, w.get(), &w->work) != napi_ok) {
    napi_delete_reference(env, w->self);
    throw JsError("cannot queue the search");
  }
  {
    std::lock_guard<std::mutex> lock(ix->readersLock);
    ix->readers++;
  }
  if (napi_queue_async_work(env, w->work) != napi_ok) {
    {
      std::lock_guard<std::mutex> lock(ix->readersLock);
      ix->readers--;
    }
    napi_delete_async_work(env, w->work);
    napi_delete_reference(env, w->self);
    throw JsError("cannot queue the search");
  }
  w.release();  // asyncComplete owns it
  return promise;
}

}  // namespace arkivector
